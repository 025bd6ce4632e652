/**
 * The changelog keyed handle: a materialization (handles of the wrapped backend's own kinds, its
 * files in the job's `shared/` directory) plus the log segments holding every change after it up
 * to the checkpoint. Restore applies the materialization and replays the log over it, key group by
 * key group, so it restores at any parallelism and into any backend.
 */
import { StorageError } from '../../core/errors.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { streamSize } from '../../storage/handles.ts';
import { type LoggedChange, readSegment } from '../changelog/log-format.ts';
import { ReplaySink } from '../changelog/replay.ts';
import { streamName } from '../formats/stream-format.ts';
import { rangeContains, rangesIntersect, type KeyGroupRange } from '../key-groups.ts';
import type { KeyedHandleBase, KeyedHandleKind } from './kind.ts';
import { readKeyCounts, readRange, writeKeyCounts, writeRange } from './metadata-fields.ts';
import type { KeyedStateHandle } from './registry.ts';

/**
 * The registry's lookups, bound by `registry.ts` once every kind is listed: a materialization holds
 * handles of the other kinds, and importing the registry here would make a cycle at load time.
 */
interface Lookups {
  kindOf(handle: KeyedStateHandle): KeyedHandleKind<KeyedStateHandle>;
  kindOfTag(tag: string | undefined): KeyedHandleKind<KeyedStateHandle>;
  readonly tags: readonly string[];
}
let lookups: Lookups | null = null;

/** Called once by `registry.ts`. */
export function bindChangelogLookups(l: Lookups): void {
  lookups = l;
}

function registry(): Lookups {
  if (lookups === null) throw new Error('changelog handle kind used before the handle registry was loaded');
  return lookups;
}
const keyedHandleKind = (h: KeyedStateHandle): KeyedHandleKind<KeyedStateHandle> => registry().kindOf(h);

/** The layout version of the handle inside the metadata body (its `version` field). */
export const CHANGELOG_HANDLE_VERSION = 1;

/** One uploaded log segment: the changes [fromSeq, toSeq) of one subtask. */
export interface ChangelogSegment {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly stream: StreamStateHandle;
}

/** A snapshot of the wrapped backend that the log continues from: changes before `seq` are in it. */
export interface Materialization {
  /** The id the wrapped backend's snapshot was taken under (the checkpoint whose sync phase started it). */
  readonly id: number;
  readonly seq: number;
  /** Empty for the empty state a log starts from. */
  readonly handles: readonly KeyedStateHandle[];
}

/** The bytes of a materialization's state (what the log's size is weighed against). */
export function materializationBytes(m: Materialization): number {
  let bytes = 0;
  for (const h of m.handles) bytes += keyedHandleKind(h).sizes(h).stateBytes;
  return bytes;
}

/** Keyed state of one key-group range as a materialization plus the changes after it. */
export interface ChangelogStateHandle extends KeyedHandleBase {
  readonly type: 'changelog';
  readonly range: KeyGroupRange;
  readonly checkpointId: number;
  /** The newest completed checkpoint the backend knew of at the sync phase (null: none): it reuses log segments of that one on. */
  readonly knownCompletedCheckpointId: number | null;
  readonly materialization: Materialization;
  /** Ascending and contiguous, covering [materialization.seq, toSeq) (the first may start before it). */
  readonly segments: readonly ChangelogSegment[];
  /** Changes before it are in the checkpoint. */
  readonly toSeq: number;
  readonly keyCounts: Readonly<Record<string, number>>;
}

/** The segments must cover [from, to) without a gap; a missing stretch is named, never replayed around. */
export function checkSegments(handle: ChangelogStateHandle): void {
  let next = handle.materialization.seq;
  for (const s of handle.segments) {
    if (s.toSeq <= next) continue;
    if (s.fromSeq > next)
      throw new StorageError('CORRUPT_FILE', streamName(s.stream), `changelog segment starts at change ${s.fromSeq}; changes from ${next} are missing`);
    next = s.toSeq;
  }
  if (next < handle.toSeq)
    throw new StorageError('CORRUPT_FILE', `changelog of checkpoint ${handle.checkpointId}`, `changes ${next} to ${handle.toSeq} are in no segment`);
}

/** Segment reads a restore keeps in flight. */
const SEGMENT_READS_AHEAD = 8;

/** The changes of `handle` inside `range`, read and checked, handed to `add` in sequence order. */
async function readChanges(
  handle: ChangelogStateHandle,
  range: KeyGroupRange,
  read: (s: StreamStateHandle) => Promise<Uint8Array>,
  add: (c: LoggedChange) => void,
): Promise<void> {
  checkSegments(handle);
  const fromSeq = handle.materialization.seq;
  const toSeq = handle.toSeq;
  const wanted = handle.segments.filter((s) => s.toSeq > fromSeq && s.fromSeq < toSeq);
  // A log is often many small segments: keep a few reads in flight ahead of the one being replayed.
  const reads: (Promise<Uint8Array> | undefined)[] = [];
  const start = (i: number): void => {
    if (i >= wanted.length) return;
    const p = read(wanted[i]!.stream);
    p.catch(() => {}); // awaited in its turn; an earlier failure must not leave it unhandled
    reads[i] = p;
  };
  for (let i = 0; i < SEGMENT_READS_AHEAD; i++) start(i);
  for (let i = 0; i < wanted.length; i++) {
    const s = wanted[i]!;
    const bytes = await reads[i]!;
    reads[i] = undefined;
    start(i + SEGMENT_READS_AHEAD);
    const label = streamName(s.stream);
    const changes = readSegment(bytes, label);
    const last = changes.length === 0 ? s.fromSeq : changes[changes.length - 1]!.seq + 1;
    if (changes.length === 0 || changes[0]!.seq !== s.fromSeq || last !== s.toSeq) {
      throw new StorageError('CORRUPT_FILE', label, `holds changes ${changes[0]?.seq ?? s.fromSeq} to ${last}, its handle says ${s.fromSeq} to ${s.toSeq}`);
    }
    for (const c of changes) {
      if (c.seq < fromSeq || c.seq >= toSeq || !rangeContains(range, c.keyGroup)) continue;
      if (!rangeContains(handle.range, c.keyGroup))
        throw new StorageError('CORRUPT_FILE', label, `change ${c.seq} is of key group ${c.keyGroup}, outside the handle's range`);
      add(c);
    }
  }
}

/** The descriptor of changelog keyed handles. */
export const changelogHandleKind: KeyedHandleKind<ChangelogStateHandle> = {
  type: 'changelog',
  streams: (handle) => [...handle.materialization.handles.flatMap((h) => keyedHandleKind(h).streams(h)), ...handle.segments.map((s) => s.stream)],
  sizes(handle) {
    let stateBytes = materializationBytes(handle.materialization);
    for (const s of handle.segments) stateBytes += streamSize(s.stream);
    // Segments and materializations are uploaded off the checkpoint; what this one persisted is not known per handle.
    return { persistedBytes: 0, stateBytes };
  },
  reusesFilesFrom(handle) {
    let min = handle.knownCompletedCheckpointId ?? -Infinity;
    for (const h of handle.materialization.handles) min = Math.min(min, keyedHandleKind(h).reusesFilesFrom(h));
    return min;
  },
  // Format 1: { type: 'changelog', version: 1, range, checkpointId, knownCompletedCheckpointId: n | null,
  //   materialization: { id, seq, handles: [keyed handle maps] }, segments: [{ fromSeq, toSeq, stream }], toSeq, keyCounts }
  metadata: {
    tag: 'changelog',
    write: (handle, writeStream) => ({
      type: 'changelog',
      version: CHANGELOG_HANDLE_VERSION,
      range: writeRange(handle.range),
      checkpointId: handle.checkpointId,
      knownCompletedCheckpointId: handle.knownCompletedCheckpointId,
      materialization: {
        id: handle.materialization.id,
        seq: handle.materialization.seq,
        handles: handle.materialization.handles.map((h) => keyedHandleKind(h).metadata.write(h, writeStream)),
      },
      segments: handle.segments.map((s) => ({ fromSeq: s.fromSeq, toSeq: s.toSeq, stream: writeStream(s.stream) })),
      toSeq: handle.toSeq,
      keyCounts: writeKeyCounts(handle.keyCounts),
    }),
    read(c, o, at, readStream) {
      const version = c.int(o.version, `${at}.version`);
      if (version !== CHANGELOG_HANDLE_VERSION) {
        throw new StorageError('UNSUPPORTED_VERSION', at, `changelog handle version ${version}, this Weir reads ${CHANGELOG_HANDLE_VERSION}`);
      }
      const m = c.object(o.materialization, `${at}.materialization`);
      const handles = c.array(m.handles, `${at}.materialization.handles`).map((v, i) => {
        const hAt = `${at}.materialization.handles[${i}]`;
        const h = c.object(v, hAt);
        const tag = h.type === undefined ? undefined : c.oneOf(h.type, `${hAt}.type`, registry().tags);
        if (tag === 'changelog') throw new StorageError('CORRUPT_FILE', hAt, 'a materialization holds a changelog handle');
        return registry().kindOfTag(tag).metadata.read(c, h, hAt, readStream);
      });
      const segments = c.array(o.segments, `${at}.segments`).map((v, i): ChangelogSegment => {
        const s = c.object(v, `${at}.segments[${i}]`);
        return {
          fromSeq: c.int(s.fromSeq, `${at}.segments[${i}].fromSeq`),
          toSeq: c.int(s.toSeq, `${at}.segments[${i}].toSeq`),
          stream: readStream(s.stream, `${at}.segments[${i}].stream`),
        };
      });
      return {
        type: 'changelog',
        range: readRange(c, o.range, `${at}.range`),
        checkpointId: c.int(o.checkpointId, `${at}.checkpointId`),
        knownCompletedCheckpointId: o.knownCompletedCheckpointId === null ? null : c.int(o.knownCompletedCheckpointId, `${at}.knownCompletedCheckpointId`),
        materialization: { id: c.int(m.id, `${at}.materialization.id`), seq: c.int(m.seq, `${at}.materialization.seq`), handles },
        segments,
        toSeq: c.int(o.toSeq, `${at}.toSeq`),
        keyCounts: readKeyCounts(c, o.keyCounts, `${at}.keyCounts`),
      };
    },
  },
  async inspect(handle, read) {
    const figures = (await Promise.all(handle.materialization.handles.map((h) => keyedHandleKind(h).inspect(h, read)))).flat();
    const logBytes = handle.segments.reduce((n, s) => n + streamSize(s.stream), 0);
    return [...figures, { name: '(changelog)', kind: 'log', bytes: logBytes }];
  },
  async restore(handle, target) {
    const replay = new ReplaySink(target.sink, `changelog of checkpoint ${handle.checkpointId}`);
    await readChanges(handle, target.range, target.read, (c) => replay.add(c));
    const inner = { ...target, sink: replay };
    for (const h of handle.materialization.handles) {
      if (rangesIntersect(h.range, target.range)) await keyedHandleKind(h).restore(h, inner);
    }
    const start = Math.max(target.range.start, handle.range.start);
    const end = Math.min(target.range.end, handle.range.end);
    for (let keyGroup = start; keyGroup <= end; keyGroup++) replay.finishKeyGroup(keyGroup);
  },
};
