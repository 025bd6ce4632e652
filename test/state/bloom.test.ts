import { describe, expect, it } from 'vitest';
import { BloomFilter, GrowingBloomFilter, bytesHash } from '../../src/state/bloom.ts';

const enc = new TextEncoder();
const h = (s: string, seed = 0) => bytesHash(enc.encode(s), seed);

describe('Bloom filters', () => {
  it('a fixed filter has no false negatives and ~1.5% false positives at its expected count', () => {
    const f = new BloomFilter(10_000);
    for (let i = 0; i < 10_000; i++) f.add(h(`key-${i}`));
    for (let i = 0; i < 10_000; i++) expect(f.mayHold(h(`key-${i}`))).toBe(true);
    let fp = 0;
    for (let i = 10_000; i < 30_000; i++) if (f.mayHold(h(`key-${i}`))) fp++;
    expect(fp / 20_000).toBeLessThan(0.03);
    expect(f.added).toBe(10_000);
  });

  it('a growing filter keeps every key through its layers, and its false positives stay low at 20x its first layer', () => {
    const f = new GrowingBloomFilter(1_000);
    for (let i = 0; i < 20_000; i++) f.add(h(`key-${i}`));
    for (let i = 0; i < 20_000; i++) expect(f.mayHold(h(`key-${i}`))).toBe(true);
    let fp = 0;
    for (let i = 20_000; i < 40_000; i++) if (f.mayHold(h(`key-${i}`))) fp++;
    expect(fp / 20_000).toBeLessThan(0.06);
    // Layers of 1k, 2k, 4k, 8k, 16k keys at 10 bits each (rounded up to powers of two).
    expect(f.byteLength).toBeLessThan((2 * (31_000 * 10)) / 8 + 4096);
  });

  it('the seed and the byte range are part of the hash', () => {
    const bytes = enc.encode('xkey-1y');
    expect(bytesHash(bytes, 0, 1, 6)).toBe(h('key-1'));
    expect(bytesHash(bytes, 1, 1, 6)).not.toBe(h('key-1'));
  });
});
