/** The benchmark key generator: distinct vocabulary, Zipf frequencies, determinism. */
import { describe, expect, it } from 'vitest';
import { uniformAt } from '../../src/index.ts';
import { assertSameCounts, countsDigest } from '../../bench/lib/counts.ts';
import { AliasTable, buildVocabulary, zipfKeys, zipfWeights } from '../../bench/lib/zipf.ts';

describe('bench zipf keys', () => {
  it('builds a vocabulary of distinct words, the same for the same seed', () => {
    const words = buildVocabulary(10_000, 7);
    expect(new Set(words).size).toBe(10_000);
    expect(buildVocabulary(10_000, 7)).toEqual(words);
    expect(buildVocabulary(10_000, 8)).not.toEqual(words);
  });

  it('samples each index with its weight', () => {
    const weights = zipfWeights(100, 1);
    const table = new AliasTable(weights);
    const draws = 400_000;
    const seen = new Float64Array(100);
    for (let i = 0; i < draws; i++) seen[table.sample(uniformAt(3, i))]!++;
    for (let r = 0; r < 100; r++) {
      const expected = weights[r]! * draws;
      // 5 standard deviations of a binomial count, plus a little for the 32-bit uniform.
      expect(Math.abs(seen[r]! - expected)).toBeLessThan(5 * Math.sqrt(expected) + 5);
    }
  });

  it('gives record i the same key in every call', () => {
    const { keyAt, vocabulary } = zipfKeys(1000, 1, 1);
    const first = Array.from({ length: 1000 }, (_, i) => keyAt(i, 5));
    expect(Array.from({ length: 1000 }, (_, i) => keyAt(i, 5))).toEqual(first);
    for (const key of first) expect(vocabulary).toContain(key);
  });

  it('fails loudly on differing counts and digests equal counts alike', () => {
    const a = new Map([
      ['x', 1],
      ['y', 2],
    ]);
    expect(() =>
      assertSameCounts(
        'v',
        a,
        new Map([
          ['y', 2],
          ['x', 1],
        ]),
      ),
    ).not.toThrow();
    expect(() =>
      assertSameCounts(
        'v',
        a,
        new Map([
          ['x', 1],
          ['y', 3],
        ]),
      ),
    ).toThrow(/key "y": count 3, expected 2/);
    expect(() =>
      assertSameCounts(
        'v',
        a,
        new Map([
          ['x', 1],
          ['z', 2],
        ]),
      ),
    ).toThrow(/differ/);
    expect(
      countsDigest(
        new Map([
          ['y', 2],
          ['x', 1],
        ]),
      ),
    ).toBe(countsDigest(a));
    expect(
      countsDigest(
        new Map([
          ['x', 2],
          ['y', 1],
        ]),
      ),
    ).not.toBe(countsDigest(a));
  });
});
