/**
 * Key groups: the unit of keyed-state redistribution. A key's group is
 * `murmur3(stableHash(key)) mod maxParallelism`; subtask i of p owns the contiguous range
 * [ceil(i*m/p), ceil((i+1)*m/p) - 1] and routing uses the inverse floor(kg*p/m), as Flink does.
 */
import type { KeyGroup } from '../core/ids.ts';

/** Keys must be primitives so that the same key hashes the same in every process and version. */
export type Key = string | number | bigint | boolean;

export interface KeyGroupRange {
  readonly start: number;
  /** Inclusive; a range with end < start is empty. */
  readonly end: number;
}

export const MAX_PARALLELISM_LIMIT = 32768;
