import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../../src/state/codec.ts';

const roundTrip = (v: unknown): unknown => decodeValue(encodeValue(v));

describe('state value codec', () => {
  it('round-trips plain data', () => {
    const value = { a: 1, b: [1, 'x', null, true, false], c: { d: -2.5, e: '' }, f: 2 ** 40, g: -(2 ** 53), h: 'héllo 日本' };
    expect(roundTrip(value)).toEqual(value);
  });

  it('keeps bigints as bigints at every size, and numbers as numbers', () => {
    for (const b of [0n, 5n, -5n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n + 7n, -(2n ** 200n) + 1n]) {
      const back = roundTrip(b);
      expect(typeof back).toBe('bigint');
      expect(back).toBe(b);
    }
    for (const n of [0, 1, -1, 2 ** 31, 2 ** 53 + 2, 1.5, -1e300]) {
      const back = roundTrip(n);
      expect(typeof back).toBe('number');
      expect(back).toBe(n);
    }
    expect(Number.isNaN(roundTrip(NaN))).toBe(true);
    expect(roundTrip([1n, 1])).toEqual([1n, 1]);
  });

  it('decodes binary as plain Uint8Array copies, whatever the input species', () => {
    const encoded = encodeValue({ bin: new Uint8Array([1, 2, 3]) });
    for (const input of [encoded, new Uint8Array(encoded), Buffer.from(encoded)]) {
      const out = decodeValue(input) as { bin: Uint8Array };
      expect(out.bin.constructor).toBe(Uint8Array);
      expect(Array.from(out.bin)).toEqual([1, 2, 3]);
      expect(out.bin.buffer).not.toBe(input.buffer);
    }
  });

  it('throws on malformed input', () => {
    expect(() => decodeValue(new Uint8Array([0x92, 0x01]))).toThrow(); // array of 2, one element
    const ok = encodeValue([1, 2]);
    const trailing = new Uint8Array(ok.byteLength + 1);
    trailing.set(ok);
    expect(() => decodeValue(trailing)).toThrow();
  });
});
