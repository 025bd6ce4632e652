/** Keyed stream sections: entries given as pairs or already packed encode to the same bytes. */
import { describe, expect, it } from 'vitest';
import { encodeValue } from '../../../src/state/codec.ts';
import { encodeRawSection, PackedEntries } from '../../../src/state/formats/keyed-sections.ts';

describe('keyed sections', () => {
  it('a section from packed entries is byte for byte the section from pairs, and a cleared pack starts over', () => {
    const pairs = Array.from({ length: 40 }, (_, i) => [encodeValue(`k${i}`), encodeValue(i % 3 === 0 ? [i, 'x'] : i * 1000)] as const);
    const packed = new PackedEntries();
    packed.add(encodeValue('stale'), encodeValue(1));
    packed.clear();
    for (const [k, v] of pairs) packed.add(k, v);
    expect(packed.length).toBe(40);
    for (const layout of ['full', 'delta'] as const) {
      const fromPairs = encodeRawSection(layout, 7, [{ name: 'count', kind: 'value', entries: [...pairs], removed: [] }]);
      const fromPacked = encodeRawSection(layout, 7, [{ name: 'count', kind: 'value', entries: packed, removed: [] }]);
      expect(Buffer.from(fromPacked).equals(Buffer.from(fromPairs))).toBe(true);
    }
  });
});
