/**
 * Restoring keyed state from any keyed handle, for every backend: a full stream, or an incremental
 * chain read base first and then each increment in order (its deletions remove keys). Only the key
 * groups of the restoring backend's range are decoded, so handles of any parallelism restore.
 */
import { RestoreError, StorageError } from '../../core/errors.ts';
import type { IncrementalStateFile, KeyedStateHandle, StreamStateHandle } from '../../storage/handles.ts';
import type { StateReader } from '../backend.ts';
import type { StateKind } from '../descriptors.ts';
import { decodeKeyedSection } from '../formats/keyed-stream.ts';
import { rangeContains, rangesIntersect, type Key, type KeyGroupRange } from '../key-groups.ts';
import { KEYED_STREAM_VERSION, readStreamHeader, streamName } from '../formats/stream-format.ts';
import { decodeDeltaSection, KEYED_DELTA_STREAM_VERSION } from '../formats/keyed-sections.ts';

/** Where restored entries go, key group by key group, in the order the handles dictate. */
export interface KeyedRestoreSink {
  put(name: string, kind: StateKind, keyGroup: number, key: Key, value: unknown): void;
  remove(name: string, kind: StateKind, keyGroup: number, key: Key): void;
  /** Called when a key group of a handle is complete (every file of a chain applied), so a sink can write it in one batch. */
  endKeyGroup?(): void;
}

/** Applies `handles` to `sink` for the key groups of `range`; `who` names the restoring backend in errors. */
export async function restoreKeyedHandles(
  handles: readonly KeyedStateHandle[],
  range: KeyGroupRange,
  maxParallelism: number,
  read: StateReader,
  sink: KeyedRestoreSink,
  who: string,
): Promise<void> {
  for (const handle of handles) {
    if (!rangesIntersect(handle.range, range)) continue;
    if (handle.range.end >= maxParallelism) {
      throw new RestoreError(`${who}: snapshot covers key group ${handle.range.end}, beyond maxParallelism ${maxParallelism}`);
    }
    const files = handle.type === 'key-groups' ? [{ kind: 'base' as const, offsets: handle.offsets, stream: handle.stream }] : handle.files;
    if (handle.type === 'incremental-key-groups') checkChain(handle.files, handle.checkpointId);
    // Key group by key group, each through the whole chain (base, then increments in order): a
    // sink sees a key group's final entries together and writes each key once.
    const opened: OpenedStream[] = [];
    for (const f of files) {
      const stream = await openStream(f.stream, f.kind === 'base' ? 'full' : 'delta', f.offsets, handle.range, range, read);
      if (stream !== null) opened.push(stream);
    }
    for (let keyGroup = Math.max(range.start, handle.range.start); keyGroup <= Math.min(range.end, handle.range.end); keyGroup++) {
      for (const stream of opened) applySection(stream, keyGroup, maxParallelism, sink);
      sink.endKeyGroup?.();
    }
  }
}

interface OpenedStream {
  readonly label: string;
  readonly layout: 'full' | 'delta';
  readonly bytes: Uint8Array;
  /** keyGroup -> [offset, length], for the key groups of the restoring range. */
  readonly sections: Map<number, readonly [number, number]>;
}

/** A chain starts with its base, has no other base, and no file is newer than the handle's checkpoint. */
function checkChain(files: readonly IncrementalStateFile[], checkpointId: number): void {
  files.forEach((f, i) => {
    const label = streamName(f.stream);
    if ((i === 0) !== (f.kind === 'base'))
      throw new StorageError('CORRUPT_FILE', label, `incremental chain file ${i} is a ${f.kind}; a chain is one base followed by increments`);
    if (f.checkpointId > checkpointId)
      throw new StorageError('CORRUPT_FILE', label, `written by checkpoint ${f.checkpointId}, newer than checkpoint ${checkpointId} that refers to it`);
  });
}

/** Reads and checks one stream of a handle; null when it holds none of the key groups of `range`. */
async function openStream(
  stream: StreamStateHandle,
  layout: 'full' | 'delta',
  offsets: ReadonlyArray<readonly [number, number, number]>,
  handleRange: KeyGroupRange,
  range: KeyGroupRange,
  read: StateReader,
): Promise<OpenedStream | null> {
  const label = streamName(stream);
  const sections = new Map<number, readonly [number, number]>();
  for (const [keyGroup, offset, length] of offsets) {
    if (!rangeContains(handleRange, keyGroup)) {
      throw new StorageError(
        'CORRUPT_FILE',
        label,
        `offsets name key group ${keyGroup}, outside the handle's range [${handleRange.start}, ${handleRange.end}]`,
      );
    }
    if (rangeContains(range, keyGroup)) sections.set(keyGroup, [offset, length]);
  }
  if (sections.size === 0) return null;
  const bytes = await read(stream);
  const expected = layout === 'full' ? KEYED_STREAM_VERSION : KEYED_DELTA_STREAM_VERSION;
  const version = readStreamHeader(bytes, 'keyed', [KEYED_STREAM_VERSION, KEYED_DELTA_STREAM_VERSION], label);
  if (version !== expected)
    throw new StorageError('CORRUPT_FILE', label, `keyed stream version ${version}, but its handle names a ${layout} file (version ${expected})`);
  return { label, layout, bytes, sections };
}

function applySection(stream: OpenedStream, keyGroup: number, maxParallelism: number, sink: KeyedRestoreSink): void {
  const section = stream.sections.get(keyGroup);
  if (section === undefined) return;
  const [offset, length] = section;
  if (stream.layout === 'full') {
    for (const state of decodeKeyedSection(stream.bytes, keyGroup, offset, length, maxParallelism, stream.label)) {
      for (const [key, value] of state.entries) sink.put(state.name, state.kind, keyGroup, key, value);
    }
    return;
  }
  for (const state of decodeDeltaSection(stream.bytes, keyGroup, offset, length, maxParallelism, stream.label)) {
    for (const key of state.removed) sink.remove(state.name, state.kind, keyGroup, key);
    for (const [key, value] of state.entries) sink.put(state.name, state.kind, keyGroup, key, value);
  }
}
