import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/core/errors.ts';
import { encodeValue } from '../../../src/state/codec.ts';
import { planSnapshot, restoredChain, type CompletedChain } from '../../../src/state/incremental/chain.ts';
import { ChangeTracker, changeSlot } from '../../../src/state/incremental/change-tracker.ts';
import { decodeDeltaSection, KeyedStreamBuilder } from '../../../src/state/formats/keyed-sections.ts';
import { decodeKeyedSection } from '../../../src/state/formats/keyed-stream.ts';
import { assignToKeyGroup } from '../../../src/state/key-groups.ts';
import type { IncrementalKeyGroupsStateHandle } from '../../../src/state/handles/incremental.ts';

const M = 128;
const keyIn = (kg: number, n: number): string[] => {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (assignToKeyGroup(`k${i}`, M) === kg) out.push(`k${i}`);
  return out;
};

/** The first [key group, offset, length] a builder wrote; throws when it wrote none. */
const firstSection = (offsets: ReadonlyArray<readonly [number, number, number]>): readonly [number, number, number] => {
  const [section] = offsets;
  if (!section) throw new Error('the builder wrote no section');
  return section;
};

describe('keyed sections from encoded pieces', () => {
  it('a full section reads back with the heap reader, maps as Maps', () => {
    const [a, b] = keyIn(5, 2);
    const b1 = new KeyedStreamBuilder('full');
    b1.add(5, [
      {
        name: 'v',
        kind: 'value',
        entries: [
          [encodeValue(a), encodeValue(1)],
          [encodeValue(b), encodeValue({ x: 2n })],
        ],
        removed: [],
      },
      { name: 'm', kind: 'map', entries: [[encodeValue(a), encodeValue([['f', 3]])]], removed: [] },
    ]);
    const { bytes, offsets } = b1.finish();
    expect(b1.keyCounts).toEqual({ v: 2, m: 1 });
    const [kg, off, len] = firstSection(offsets);
    const states = decodeKeyedSection(bytes, kg, off, len, M, 'test');
    expect(states.find((s) => s.name === 'v')!.entries).toEqual([
      [a, 1],
      [b, { x: 2n }],
    ]);
    expect(states.find((s) => s.name === 'm')!.entries).toEqual([[a, new Map([['f', 3]])]]);
  });

  it('a delta section carries values and deletions, checked against the key group', () => {
    const [a, b, c] = keyIn(9, 3);
    const d = new KeyedStreamBuilder('delta');
    d.add(9, [{ name: 'l', kind: 'list', entries: [[encodeValue(a), encodeValue(['x'])]], removed: [encodeValue(b), encodeValue(c)] }]);
    const { bytes, offsets } = d.finish();
    const [kg, off, len] = firstSection(offsets);
    expect(decodeDeltaSection(bytes, kg, off, len, M, 'test')).toEqual([{ name: 'l', kind: 'list', entries: [[a, ['x']]], removed: [b, c] }]);
    expect(() => decodeDeltaSection(bytes, kg, off, len - 1, M, 'test')).toThrow(StorageError);
  });

  it('refuses sections out of key-group order', () => {
    const s = new KeyedStreamBuilder('full');
    s.add(3, [{ name: 'v', kind: 'value', entries: [[encodeValue(keyIn(3, 1)[0]), encodeValue(1)]], removed: [] }]);
    expect(() => s.add(2, [{ name: 'v', kind: 'value', entries: [[encodeValue(keyIn(2, 1)[0]), encodeValue(1)]], removed: [] }])).toThrow(/order/);
  });
});

describe('ChangeTracker', () => {
  it('a delta covers every epoch since the completed checkpoint; completion drops them, an abort keeps them', () => {
    const t = new ChangeTracker(1000);
    t.record(changeSlot(1, 0), 'a');
    const c1 = t.close(1);
    expect(c1.complete && c1.keys).toBe(1);
    t.record(changeSlot(1, 0), 'b');
    t.record(changeSlot(1, 0), 'b');
    const c2 = t.close(2); // 1 still unconfirmed (say it is pending or was aborted)
    expect(c2.complete && c2.changes.map((c) => [...c.get(changeSlot(1, 0))!])).toEqual([['a'], ['b']]);
    t.confirm(1);
    t.record(changeSlot(2, 3), 'c');
    const c3 = t.close(3);
    expect(c3.complete && c3.changes.map((c) => [...c.values()].flatMap((s) => [...s]))).toEqual([['b'], ['c']]);
    t.confirm(3);
    const c4 = t.close(4);
    expect(c4.complete && c4.keys).toBe(0);
  });

  it('past trackedKeysMax it gives up: the next snapshot must be a base, and deltas extend only chains from then on', () => {
    const t = new ChangeTracker(3);
    for (const k of ['a', 'b', 'c', 'd']) t.record(changeSlot(1, 0), k);
    expect(t.canExtend(1)).toBe(false);
    expect(t.close(5)).toEqual({ complete: false });
    expect(t.canExtend(4)).toBe(false);
    expect(t.canExtend(5)).toBe(true);
    t.record(changeSlot(1, 0), 'e');
    const c = t.close(6);
    expect(c.complete && c.keys).toBe(1);
  });
});

describe('planSnapshot', () => {
  const chain = (baseBytes: number, deltaBytes: number, keys: number): CompletedChain => ({
    checkpointId: 1,
    files: [{ kind: 'base', checkpointId: 1, offsets: [], stream: { type: 'inline', data: new Uint8Array(), checksum: 0 } }],
    baseBytes,
    deltaBytes,
    keys,
  });

  it('writes a base without a chain or without known changes', () => {
    expect(planSnapshot({ chain: null, changesKnown: true, changedKeys: 0, incrementsShareMax: 1 })).toBe('base');
    expect(planSnapshot({ chain: chain(1000, 0, 10), changesKnown: false, changedKeys: 0, incrementsShareMax: 1 })).toBe('base');
  });

  it('extends the chain until the increments would pass the share of the base', () => {
    // 100 bytes per key in the base; 1000 bytes of base.
    expect(planSnapshot({ chain: chain(1000, 0, 10), changesKnown: true, changedKeys: 5, incrementsShareMax: 1 })).toBe('delta');
    expect(planSnapshot({ chain: chain(1000, 600, 10), changesKnown: true, changedKeys: 4, incrementsShareMax: 1 })).toBe('delta');
    expect(planSnapshot({ chain: chain(1000, 600, 10), changesKnown: true, changedKeys: 5, incrementsShareMax: 1 })).toBe('base');
    expect(planSnapshot({ chain: chain(1000, 600, 10), changesKnown: true, changedKeys: 5, incrementsShareMax: 2 })).toBe('delta');
  });

  it('extends a restored chain only at the same key-group range', () => {
    const h: IncrementalKeyGroupsStateHandle = {
      type: 'incremental-key-groups',
      range: { start: 0, end: 63 },
      checkpointId: 7,
      knownCompletedCheckpointId: 6,
      files: [],
      keyCounts: { v: 3 },
    };
    expect(restoredChain([h], { start: 0, end: 63 })?.checkpointId).toBe(7);
    expect(restoredChain([h], { start: 0, end: 42 })).toBeNull();
    expect(restoredChain([h, { ...h, range: { start: 64, end: 127 } }], { start: 0, end: 127 })).toBeNull();
  });
});
