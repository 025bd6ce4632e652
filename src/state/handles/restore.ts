/**
 * Restoring keyed state from handles of any kind and any parallelism, for every backend: each
 * handle that holds key groups of the restoring range is read by its kind (a full stream, a chain
 * of a base and increments, ...), only for the key groups of that range.
 */
import { RestoreError } from '../../core/errors.ts';
import type { StateReader } from '../backend.ts';
import type { KeyedRestoreSink } from '../formats/keyed-file-reader.ts';
import { rangesIntersect, type KeyGroupRange } from '../key-groups.ts';
import { keyedHandleKind, type KeyedStateHandle } from './registry.ts';

/** Applies `handles` to `sink` for the key groups of `range`; `who` names the restoring backend in errors. */
export async function restoreKeyedHandles(
  handles: readonly KeyedStateHandle[],
  range: KeyGroupRange,
  maxParallelism: number,
  read: StateReader,
  sink: KeyedRestoreSink,
  who: string,
): Promise<void> {
  const target = { range, maxParallelism, read, sink };
  for (const handle of handles) {
    if (!rangesIntersect(handle.range, range)) continue;
    if (handle.range.end >= maxParallelism) {
      throw new RestoreError(`${who}: snapshot covers key group ${handle.range.end}, beyond maxParallelism ${maxParallelism}`);
    }
    await keyedHandleKind(handle).restore(handle, target);
  }
}
