/**
 * Pure decisions about where state goes when a job is restored, possibly at another parallelism:
 * which keyed handles a key-group range needs, and how operator list entries are dealt out.
 */
import { assert } from '../core/assert.ts';
import type { OperatorStateMode } from '../storage/handles.ts';
import type { KeyedStateHandle } from './handles/registry.ts';
import { rangesIntersect, type KeyGroupRange } from './key-groups.ts';

/** The keyed handles (of any old parallelism) that hold key groups of `range`. */
export function keyedHandlesForRange<H extends KeyedStateHandle>(allHandles: readonly H[], range: KeyGroupRange): H[] {
  return allHandles.filter((h) => rangesIntersect(h.range, range));
}

/**
 * Deals the entries of one operator list state, given per old subtask, to `newParallelism` new
 * subtasks. Union: every new subtask gets the concatenation (in old subtask order), also when the
 * parallelism is unchanged. Split: unchanged parallelism keeps each subtask's own entries; otherwise
 * the concatenation is cut into contiguous chunks as even as possible, earlier subtasks taking
 * the one extra entry.
 */
export function redistributeListEntries<T>(mode: OperatorStateMode, oldPerSubtask: ReadonlyArray<readonly T[]>, newParallelism: number): T[][] {
  assert(Number.isInteger(newParallelism) && newParallelism >= 1, () => `newParallelism must be a positive integer, got ${newParallelism}`);
  if (mode === 'split' && oldPerSubtask.length === newParallelism) {
    return oldPerSubtask.map((entries) => entries.slice());
  }
  const all = oldPerSubtask.flat() as T[];
  if (mode === 'union') {
    return Array.from({ length: newParallelism }, () => all.slice());
  }
  const base = Math.floor(all.length / newParallelism);
  const extra = all.length % newParallelism;
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < newParallelism; i++) {
    const size = base + (i < extra ? 1 : 0);
    out.push(all.slice(start, start + size));
    start += size;
  }
  return out;
}
