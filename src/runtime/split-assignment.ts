/**
 * Which subtask reads which split, and with which position: pure decisions over the restored
 * split state and the enumerated splits, so every subtask decides alike without coordination.
 */
import { RestoreError } from '../core/errors.ts';
import { assignToKeyGroup, subtaskForKeyGroup } from '../state/key-groups.ts';
import type { SourceSplit } from './split-source.ts';

/** A split's entry in operator state (format version 1). */
export interface SplitStateEntryV1<Split extends SourceSplit, Position> {
  readonly v: 1;
  readonly split: Split;
  readonly position: Position;
  /** The split ended (bounded sources): it is not read again. */
  readonly ended: boolean;
}

/**
 * The subtask of `parallelism` that reads `split`. Numbered splits are dealt round-robin by
 * ordinal (balanced); others go by a hash of their id through the job's key groups, so the owner
 * depends only on the id, and a rescale moves only the splits of key groups that change owner.
 */
export function splitOwner(split: SourceSplit, parallelism: number, maxParallelism: number): number {
  if (split.ordinal !== undefined) {
    if (!Number.isInteger(split.ordinal) || split.ordinal < 0)
      throw new RangeError(`split '${split.id}': ordinal must be an integer >= 0, got ${split.ordinal}`);
    return split.ordinal % parallelism;
  }
  return subtaskForKeyGroup(maxParallelism, parallelism, assignToKeyGroup(split.id, maxParallelism));
}

/**
 * The splits subtask `subtask` of `parallelism` owns, restored ones first: of the restored entries (the union of every
 * subtask's state) and the enumerated splits, those `splitOwner` gives it; restored positions win,
 * new splits start at `initialPosition`. Throws a RestoreError when the restored state lists a
 * split twice (two subtasks read it: the state cannot say which position is right).
 */
export function assignSplits<Split extends SourceSplit, Position>(
  restored: readonly SplitStateEntryV1<Split, Position>[],
  enumerated: readonly Split[],
  subtask: number,
  parallelism: number,
  maxParallelism: number,
  initialPosition: (split: Split) => Position,
): SplitStateEntryV1<Split, Position>[] {
  const seen = new Set<string>();
  const entries: SplitStateEntryV1<Split, Position>[] = [];
  for (const entry of restored) {
    if (entry.v !== 1) throw new RestoreError(`split state of split '${entry.split?.id}' has format version ${String(entry.v)}; this version reads 1`);
    if (seen.has(entry.split.id)) throw new RestoreError(`split '${entry.split.id}' appears twice in the restored split state`);
    seen.add(entry.split.id);
    if (splitOwner(entry.split, parallelism, maxParallelism) === subtask) entries.push(entry);
  }
  const listed = new Set<string>();
  for (const split of enumerated) {
    if (listed.has(split.id)) throw new RangeError(`split '${split.id}' is listed twice by the source`);
    listed.add(split.id);
    if (seen.has(split.id) || splitOwner(split, parallelism, maxParallelism) !== subtask) continue;
    entries.push({ v: 1, split, position: initialPosition(split), ended: false });
  }
  return entries;
}
