/**
 * Restoring keyed state from any keyed handle, for every backend: a full stream, or an incremental
 * chain read base first and then each increment in order (its deletions remove keys). Only the key
 * groups of the restoring backend's range are decoded, so handles of any parallelism restore.
 */
import { RestoreError, StorageError } from '../../core/errors.ts';
import type { IncrementalStateFile, KeyedStateHandle, StreamStateHandle } from '../../storage/handles.ts';
import type { StateReader } from '../backend.ts';
import type { StateKind } from '../descriptors.ts';
import { decodeKeyedSection } from '../heap/keyed-stream.ts';
import { rangeContains, rangesIntersect, type Key, type KeyGroupRange } from '../key-groups.ts';
import { KEYED_STREAM_VERSION, readStreamHeader, streamName } from '../stream-format.ts';
import { decodeDeltaSection, KEYED_DELTA_STREAM_VERSION } from './keyed-sections.ts';

/** Where restored entries go, key group by key group, in the order the handles dictate. */
export interface KeyedRestoreSink {
  put(name: string, kind: StateKind, keyGroup: number, key: Key, value: unknown): void;
  remove(name: string, kind: StateKind, keyGroup: number, key: Key): void;
  /** Called after each stream, so a sink can write what it collected in one batch. */
  endStream?(): void;
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
    if (handle.type === 'key-groups') {
      await applyStream(handle.stream, 'full', handle.offsets, handle.range, range, maxParallelism, read, sink);
      continue;
    }
    checkChain(handle.files, handle.checkpointId);
    for (const file of handle.files) {
      await applyStream(file.stream, file.kind === 'base' ? 'full' : 'delta', file.offsets, handle.range, range, maxParallelism, read, sink);
    }
  }
}

/** A chain starts with its base, has no other base, and no file is newer than the handle's checkpoint. */
function checkChain(files: readonly IncrementalStateFile[], checkpointId: number): void {
  files.forEach((f, i) => {
    const label = streamName(f.stream);
    if ((i === 0) !== (f.kind === 'base')) throw new StorageError('CORRUPT_FILE', label, `incremental chain file ${i} is a ${f.kind}; a chain is one base followed by increments`);
    if (f.checkpointId > checkpointId) throw new StorageError('CORRUPT_FILE', label, `written by checkpoint ${f.checkpointId}, newer than checkpoint ${checkpointId} that refers to it`);
  });
}

async function applyStream(
  stream: StreamStateHandle,
  layout: 'full' | 'delta',
  offsets: ReadonlyArray<readonly [number, number, number]>,
  handleRange: KeyGroupRange,
  range: KeyGroupRange,
  maxParallelism: number,
  read: StateReader,
  sink: KeyedRestoreSink,
): Promise<void> {
  const label = streamName(stream);
  if (!offsets.some(([kg]) => rangeContains(range, kg))) return;
  const bytes = await read(stream);
  const expected = layout === 'full' ? KEYED_STREAM_VERSION : KEYED_DELTA_STREAM_VERSION;
  const version = readStreamHeader(bytes, 'keyed', [KEYED_STREAM_VERSION, KEYED_DELTA_STREAM_VERSION], label);
  if (version !== expected) throw new StorageError('CORRUPT_FILE', label, `keyed stream version ${version}, but its handle names a ${layout === 'full' ? 'full' : 'delta'} file (version ${expected})`);
  for (const [keyGroup, offset, length] of offsets) {
    if (!rangeContains(handleRange, keyGroup)) {
      throw new StorageError('CORRUPT_FILE', label, `offsets name key group ${keyGroup}, outside the handle's range [${handleRange.start}, ${handleRange.end}]`);
    }
    if (!rangeContains(range, keyGroup)) continue;
    if (layout === 'full') {
      for (const state of decodeKeyedSection(bytes, keyGroup, offset, length, maxParallelism, label)) {
        for (const [key, value] of state.entries) sink.put(state.name, state.kind, keyGroup, key, value);
      }
    } else {
      for (const state of decodeDeltaSection(bytes, keyGroup, offset, length, maxParallelism, label)) {
        for (const key of state.removed) sink.remove(state.name, state.kind, keyGroup, key);
        for (const [key, value] of state.entries) sink.put(state.name, state.kind, keyGroup, key, value);
      }
    }
  }
  sink.endStream?.();
}
