import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/core/time.ts';
import {
  assignToKeyGroup,
  keyGroupRangeForSubtask,
  murmurMix,
  rangeContains,
  rangeSize,
  rangesIntersect,
  stableHash,
  subtaskForKeyGroup,
  type Key,
} from '../../src/state/key-groups.ts';

/** Flink's MathUtils.murmurHash written independently with BigInt emulating Java int arithmetic. */
function referenceMurmur(code: number): number {
  const i32 = (x: bigint): bigint => BigInt.asIntN(32, x);
  const rotl = (x: bigint, r: bigint): bigint => i32((BigInt.asUintN(32, x) << r) | (BigInt.asUintN(32, x) >> (32n - r)));
  const ushr = (x: bigint, r: bigint): bigint => BigInt.asUintN(32, x) >> r;
  let c = BigInt(code);
  c = i32(c * 0xcc9e2d51n);
  c = rotl(c, 15n);
  c = i32(c * 0x1b873593n);
  c = rotl(c, 13n);
  c = i32(c * 5n + 0xe6546b64n);
  c = i32(c ^ 4n);
  c = i32(c ^ ushr(c, 16n));
  c = i32(c * 0x85ebca6bn);
  c = i32(c ^ ushr(c, 13n));
  c = i32(c * 0xc2b2ae35n);
  c = i32(c ^ ushr(c, 16n));
  if (c >= 0n) return Number(c);
  return c === -0x80000000n ? 0 : Number(-c);
}

describe('stableHash', () => {
  it('matches Java hashCode for strings, ints, doubles and booleans', () => {
    expect(stableHash('hello')).toBe(99162322);
    expect(stableHash('abc')).toBe(96354);
    expect(stableHash('')).toBe(0);
    expect(stableHash(42)).toBe(42);
    expect(stableHash(-2147483648)).toBe(-2147483648);
    expect(stableHash(1.5)).toBe(1073217536); // Double.hashCode(1.5)
    expect(stableHash(true)).toBe(1231);
    expect(stableHash(false)).toBe(1237);
  });

  it('keeps fixed values for other keys (a change here moves keys between key groups)', () => {
    const cases: Array<[Key, number]> = [
      ['user-42', -147182656],
      ['日本', 835047],
      [2147483648, 1105199104],
      [-0.25, -1076887552],
      [1e300, -164130400],
      [NaN, 2146959360],
      [Infinity, 2146435072],
      [5n, 5],
      [-5n, -5],
      [2n ** 40n, 256],
      [-(2n ** 40n), -256],
      [2n ** 100n + 3n, 89389],
    ];
    for (const [key, hash] of cases) expect(stableHash(key), String(key)).toBe(hash);
  });

  it('hashes -0 like 0 and small bigints like equal numbers', () => {
    expect(stableHash(-0)).toBe(0);
    expect(stableHash(123n)).toBe(stableHash(123));
    expect(stableHash(-7n)).toBe(stableHash(-7));
  });

  it('always returns an int32', () => {
    for (const key of ['x'.repeat(1000), 1e-300, -1e300, 2n ** 200n, -(2n ** 63n), 9007199254740993n]) {
      const h = stableHash(key);
      expect(h | 0).toBe(h);
    }
  });

  it('rejects non-primitive keys', () => {
    expect(() => stableHash({} as unknown as Key)).toThrow(TypeError);
  });
});

describe('murmurMix', () => {
  it("equals Flink's MathUtils.murmurHash and is never negative", () => {
    const inputs = [0, 1, -1, 42, 0x7fffffff, -0x80000000, 99162322, 1231, 1237];
    let x = 12345;
    for (let i = 0; i < 2000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) | 0;
      inputs.push(x);
    }
    for (const code of inputs) {
      const h = murmurMix(code);
      expect(h).toBe(referenceMurmur(code));
      expect(h).toBeGreaterThanOrEqual(0);
    }
  });

  it('keeps fixed values', () => {
    expect(murmurMix(0)).toBe(593689054);
    expect(murmurMix(1)).toBe(68075478);
    expect(murmurMix(-1)).toBe(1982413648);
  });
});

describe('assignToKeyGroup', () => {
  it('keeps fixed values at maxParallelism 128 and 32768', () => {
    const cases: Array<[Key, number, number]> = [
      ['hello', 35, 31395],
      ['', 94, 31198],
      ['user-42', 20, 20116],
      [42, 29, 28189],
      [1.5, 65, 833],
      [5n, 126, 15230],
      [2n ** 100n + 3n, 40, 5544],
      [true, 77, 11725],
      [false, 3, 32003],
    ];
    for (const [key, at128, at32768] of cases) {
      expect(assignToKeyGroup(key, 128), String(key)).toBe(at128);
      expect(assignToKeyGroup(key, 32768), String(key)).toBe(at32768);
    }
  });

  it('hashes strings of every length as Java does one character at a time, and maps to groups by modulo for any maxParallelism', () => {
    const javaHash = (s: string) => {
      let h = 0;
      for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
      return h;
    };
    const random = new SeededRandom(28);
    for (let n = 0; n < 2000; n++) {
      let s = '';
      const length = n % 41;
      for (let c = 0; c < length; c++) s += String.fromCharCode(random.int(n % 3 === 0 ? 0x10000 : 128));
      expect(stableHash(s), JSON.stringify(s)).toBe(javaHash(s));
      for (const m of [1, 3, 100, 128, 129, 4096, 32767]) expect(assignToKeyGroup(s, m)).toBe(murmurMix(javaHash(s)) % m);
    }
  });

  it('spreads keys over all key groups', () => {
    const counts = new Array(128).fill(0);
    for (let i = 0; i < 128_000; i++) counts[assignToKeyGroup(`key-${i}`, 128)]++;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1200);
  });
});

describe('key-group ranges', () => {
  const pairs: Array<[number, number]> = [];
  for (const m of [1, 2, 3, 7, 10, 128, 129, 1000, 4096, 32768]) {
    for (const p of [1, 2, 3, 4, 5, 7, 8, 16, 31, 100, 127, 128, 1000, m]) if (p <= m) pairs.push([m, p]);
  }

  it('partition [0, m) into contiguous non-empty ranges in subtask order', () => {
    const bad: string[] = [];
    for (const [m, p] of pairs) {
      let next = 0;
      for (let i = 0; i < p; i++) {
        const r = keyGroupRangeForSubtask(m, p, i);
        const size = rangeSize(r);
        if (r.start !== next || size < Math.floor(m / p) || size > Math.ceil(m / p)) bad.push(`m=${m} p=${p} i=${i}`);
        next = r.end + 1;
      }
      if (next !== m) bad.push(`m=${m} p=${p} ends at ${next}`);
    }
    expect(bad).toEqual([]);
  });

  it('route every key group to the subtask whose range contains it', () => {
    const bad: string[] = [];
    for (const [m, p] of pairs) {
      const ranges = Array.from({ length: p }, (_, i) => keyGroupRangeForSubtask(m, p, i));
      for (let kg = 0; kg < m; kg++) {
        const owner = subtaskForKeyGroup(m, p, kg);
        if (!(owner >= 0 && owner < p && rangeContains(ranges[owner]!, kg))) bad.push(`m=${m} p=${p} kg=${kg} -> ${owner}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('match Flink for m=128, p=3', () => {
    expect([0, 1, 2].map((i) => keyGroupRangeForSubtask(128, 3, i))).toEqual([
      { start: 0, end: 42 },
      { start: 43, end: 85 },
      { start: 86, end: 127 },
    ]);
  });

  it('reject parallelism above maxParallelism and bad subtasks', () => {
    expect(() => keyGroupRangeForSubtask(4, 5, 0)).toThrow(/parallelism/);
    expect(() => keyGroupRangeForSubtask(128, 2, 2)).toThrow(/subtask/);
    expect(() => keyGroupRangeForSubtask(0, 1, 0)).toThrow(/maxParallelism/);
  });

  it('size, contain and intersect', () => {
    expect(rangeSize({ start: 3, end: 2 })).toBe(0);
    expect(rangeSize({ start: 3, end: 3 })).toBe(1);
    expect(rangeContains({ start: 3, end: 5 }, 5)).toBe(true);
    expect(rangeContains({ start: 3, end: 5 }, 6)).toBe(false);
    expect(rangesIntersect({ start: 0, end: 10 }, { start: 10, end: 20 })).toBe(true);
    expect(rangesIntersect({ start: 0, end: 9 }, { start: 10, end: 20 })).toBe(false);
    expect(rangesIntersect({ start: 5, end: 4 }, { start: 0, end: 20 })).toBe(false);
  });
});
