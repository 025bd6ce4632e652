/**
 * Key groups: the unit of keyed-state redistribution. A key's group is
 * `murmur3(stableHash(key)) mod maxParallelism`; subtask i of p owns the contiguous range
 * [ceil(i*m/p), ceil((i+1)*m/p) - 1] and routing uses the inverse floor(kg*p/m), as Flink does.
 */
import type { KeyGroup } from '../core/ids.ts';
import { assert } from '../core/assert.ts';

/** Keys must be primitives so that the same key hashes the same in every process and version. */
export type Key = string | number | bigint | boolean;

export interface KeyGroupRange {
  readonly start: number;
  /** Inclusive; a range with end < start is empty. */
  readonly end: number;
}

export const MAX_PARALLELISM_LIMIT = 32768;

/** Default maxParallelism when a job does not set one. */
export const DEFAULT_MAX_PARALLELISM = 128;

// Scratch space for hashing float64 bits; module-level so hashing never allocates.
const scratchView = new DataView(new ArrayBuffer(8));

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;
const BIGINT_INT32_MIN = -0x8000_0000n;
const BIGINT_INT32_MAX = 0x7fff_ffffn;

/**
 * A 32-bit hash of a key that is the same in every process and version: strings hash like Java's
 * `String.hashCode`, int32 numbers hash to themselves, other numbers to their float64 bits (as
 * Java's `Double.hashCode`, NaN canonicalised), bigints fold their 32-bit chunks of magnitude
 * (least significant first, negated for negatives, so small bigints hash like equal numbers), and
 * booleans as Java's `Boolean.hashCode`. Changing any of this moves keys between key groups and
 * breaks restoring old snapshots.
 */
export function stableHash(key: Key): number {
  switch (typeof key) {
    case 'string':
      return stringHash(key);
    case 'number':
      return numberHash(key);
    case 'bigint':
      return bigintHash(key);
    case 'boolean':
      return key ? 1231 : 1237;
    default:
      throw new TypeError(`stableHash: unsupported key type ${typeof key}`);
  }
}

/**
 * Java's `String.hashCode`, two characters per step: h*31^2 + c0*31 + c1 is the same int32 as two
 * single steps (the sum stays below 2^53, so `| 0` wraps it exactly), with half the dependent
 * multiplies. Every record of a hash edge hashes its key, so this is on the record path.
 */
function stringHash(s: string): number {
  let h = 0;
  const n = s.length;
  let i = 0;
  for (; i + 1 < n; i += 2) h = (Math.imul(961, h) + 31 * s.charCodeAt(i) + s.charCodeAt(i + 1)) | 0;
  if (i < n) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

function numberHash(n: number): number {
  if (Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX) return n | 0;
  if (Number.isNaN(n)) return 0x7ff8_0000; // canonical NaN: high word 0x7ff80000, low word 0
  scratchView.setFloat64(0, n);
  return scratchView.getInt32(0) ^ scratchView.getInt32(4);
}

function bigintHash(b: bigint): number {
  if (b >= BIGINT_INT32_MIN && b <= BIGINT_INT32_MAX) return Number(b) | 0;
  const negative = b < 0n;
  let magnitude = negative ? -b : b;
  let h = 0;
  while (magnitude > 0n) {
    h = (Math.imul(31, h) + Number(BigInt.asUintN(32, magnitude))) | 0;
    magnitude >>= 32n;
  }
  return negative ? -h | 0 : h;
}

/** Flink's `MathUtils.murmurHash`: murmur3's scramble and fmix of one int; never negative. */
export function murmurMix(code: number): number {
  let h = Math.imul(code | 0, 0xcc9e2d51);
  h = (h << 15) | (h >>> 17);
  h = Math.imul(h, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  h ^= 4;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  if (h >= 0) return h;
  return h === INT32_MIN ? 0 : -h;
}

/**
 * The key group of a key: `murmurMix(stableHash(key)) mod maxParallelism`. The mixed hash is never
 * negative, so for a power-of-two maxParallelism (the default 128) a mask gives the same group
 * without an integer division.
 */
export function assignToKeyGroup(key: Key, maxParallelism: number): KeyGroup {
  const mixed = murmurMix(stableHash(key));
  return ((maxParallelism & (maxParallelism - 1)) === 0 ? mixed & (maxParallelism - 1) : mixed % maxParallelism) as KeyGroup;
}

function checkParallelism(maxParallelism: number, parallelism: number): void {
  assert(
    Number.isInteger(maxParallelism) && maxParallelism >= 1 && maxParallelism <= MAX_PARALLELISM_LIMIT,
    () => `maxParallelism must be an integer in [1, ${MAX_PARALLELISM_LIMIT}], got ${maxParallelism}`,
  );
  assert(
    Number.isInteger(parallelism) && parallelism >= 1 && parallelism <= maxParallelism,
    () => `parallelism must be an integer in [1, maxParallelism=${maxParallelism}], got ${parallelism}`,
  );
}

/** The key groups subtask `subtask` of `parallelism` owns: [ceil(i*m/p), ceil((i+1)*m/p) - 1]. */
export function keyGroupRangeForSubtask(maxParallelism: number, parallelism: number, subtask: number): KeyGroupRange {
  checkParallelism(maxParallelism, parallelism);
  assert(Number.isInteger(subtask) && subtask >= 0 && subtask < parallelism, () => `subtask must be an integer in [0, ${parallelism}), got ${subtask}`);
  const start = Math.floor((subtask * maxParallelism + parallelism - 1) / parallelism);
  const end = Math.floor(((subtask + 1) * maxParallelism + parallelism - 1) / parallelism) - 1;
  return { start, end };
}

/** The subtask that owns key group `keyGroup`: floor(kg*p/m), the inverse of keyGroupRangeForSubtask. */
export function subtaskForKeyGroup(maxParallelism: number, parallelism: number, keyGroup: number): number {
  return Math.floor((keyGroup * parallelism) / maxParallelism);
}

export function rangeContains(range: KeyGroupRange, keyGroup: number): boolean {
  return keyGroup >= range.start && keyGroup <= range.end;
}

export function rangeSize(range: KeyGroupRange): number {
  return range.end < range.start ? 0 : range.end - range.start + 1;
}

export function rangesIntersect(a: KeyGroupRange, b: KeyGroupRange): boolean {
  return rangeSize(a) > 0 && rangeSize(b) > 0 && a.start <= b.end && b.start <= a.end;
}
