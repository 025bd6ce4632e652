/**
 * Reading keyed state files back for one key-group range: full files (every entry of a key group)
 * and delta files (an increment's changed entries and deletions), applied in the order given so a
 * later file's entries and deletions win. Only the key groups of the restoring range are decoded,
 * so files of any parallelism restore. The keyed handle kinds (`state/handles/`) say which files a
 * handle has and in which order.
 */
import { StorageError } from '../../core/errors.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import type { StateReader } from '../backend.ts';
import type { StateKind } from '../descriptors.ts';
import { rangeContains, type Key, type KeyGroupRange } from '../key-groups.ts';
import { decodeDeltaSection, KEYED_DELTA_STREAM_VERSION, STREAM_VERSION_OF, type SectionLayout } from './keyed-sections.ts';
import { decodeKeyedSection } from './keyed-stream.ts';
import { KEYED_STREAM_VERSION, readStreamHeader, streamName } from './stream-format.ts';

/** Where restored entries go, key group by key group, in the order the handles dictate. */
export interface KeyedRestoreSink {
  put(name: string, kind: StateKind, keyGroup: number, key: Key, value: unknown): void;
  remove(name: string, kind: StateKind, keyGroup: number, key: Key): void;
  /**
   * Optional: a `put` of a value still encoded as `encodeValue` wrote it, for kinds other than `map`
   * (whose working value is stored as its entries): a sink that stores encoded values keeps these
   * bytes as they are instead of decoding and encoding them again. The bytes are a view the sink
   * may keep until the restore ends.
   */
  putEncoded?(name: string, kind: Exclude<StateKind, 'map'>, keyGroup: number, key: Key, bytes: Uint8Array): void;
  /** Called when a key group of a handle is complete (every file of a chain applied), so a sink can write it in one batch. */
  endKeyGroup?(): void;
}

/** What a restoring backend asks for: the key groups of `range`, into `sink`. */
export interface KeyedRestoreTarget {
  readonly range: KeyGroupRange;
  readonly maxParallelism: number;
  readonly read: StateReader;
  readonly sink: KeyedRestoreSink;
}

/** One keyed state file: its layout and [keyGroup, offset, length] of each key group it holds. */
export interface KeyedFile {
  readonly layout: SectionLayout;
  readonly offsets: ReadonlyArray<readonly [number, number, number]>;
  readonly stream: StreamStateHandle;
}

/**
 * Applies `files` (of a handle covering `handleRange`) to the target's sink for the key groups of
 * the target's range: key group by key group, each through every file in order, so a sink sees a
 * key group's final entries together and writes each key once.
 */
export async function applyKeyedFiles(files: readonly KeyedFile[], handleRange: KeyGroupRange, target: KeyedRestoreTarget): Promise<void> {
  const { range } = target;
  const opened: OpenedStream[] = [];
  for (const f of files) {
    const stream = await openStream(f, handleRange, range, target.read);
    if (stream !== null) opened.push(stream);
  }
  for (let keyGroup = Math.max(range.start, handleRange.start); keyGroup <= Math.min(range.end, handleRange.end); keyGroup++) {
    for (const stream of opened) applySection(stream, keyGroup, target.maxParallelism, target.sink);
    target.sink.endKeyGroup?.();
  }
}

interface OpenedStream {
  readonly label: string;
  readonly layout: SectionLayout;
  readonly bytes: Uint8Array;
  /** keyGroup -> [offset, length], for the key groups of the restoring range. */
  readonly sections: Map<number, readonly [number, number]>;
}

/** Reads and checks one file of a handle; null when it holds none of the key groups of `range`. */
async function openStream(file: KeyedFile, handleRange: KeyGroupRange, range: KeyGroupRange, read: StateReader): Promise<OpenedStream | null> {
  const { layout, stream } = file;
  const label = streamName(stream);
  const sections = new Map<number, readonly [number, number]>();
  for (const [keyGroup, offset, length] of file.offsets) {
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
  const expected = STREAM_VERSION_OF[layout];
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
