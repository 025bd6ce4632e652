import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WeirError } from '../../../src/core/errors.ts';
import { SeededRandom } from '../../../src/core/time.ts';
import { ValueStateDescriptor } from '../../../src/state/descriptors.ts';
import type { StateChangeListener } from '../../../src/state/backend.ts';
import type { Key } from '../../../src/state/key-groups.ts';
import type { ValueState } from '../../../src/state/state.ts';
import { evictionsPerSweep } from '../../../src/state/embedded/embedded-keyed-backend.ts';
import { disposeAll, dump, embedded, fill, heap, keys, randomOp, setKey } from './fixtures.ts';

afterEach(disposeAll);

describe('embedded keyed backend: the same state API as the heap backend', () => {
  it('every state kind agrees with the heap backend under random operations, state 20x the cache', () => {
    const r = new SeededRandom(42);
    const e = embedded({ cacheEntriesMax: 25 });
    const h = heap();
    for (let i = 0; i < 20_000; i++) {
      const [seenE, seenH] = randomOp(r, [e, h], 100);
      expect(seenE).toEqual(seenH);
    }
    expect(dump(e)).toEqual(dump(h));
    expect(e.keyCounts()).toEqual(h.keyCounts());
    expect(e.cachedEntries).toBeLessThanOrEqual(25);
  });

  it('holds 20,000 keys with a cache of 100 entries', () => {
    const e = embedded({ cacheEntriesMax: 100 });
    const v = e.getState<ValueState<number>>(new ValueStateDescriptor('v'));
    for (let i = 0; i < 20_000; i++) {
      setKey(e, i);
      v.update(i * 3);
    }
    expect(e.cachedEntries).toBeLessThanOrEqual(100);
    for (let i = 0; i < 20_000; i += 7) {
      setKey(e, i);
      expect(v.value()).toBe(i * 3);
    }
    expect(e.keyCounts()).toEqual({ v: 20_000 });
  });

  it('a full cache evicts 1/128 of itself at a time (at least min(64, an eighth)), keeping every value', () => {
    expect([100_000, 10_000, 1_000, 100, 8, 1].map(evictionsPerSweep)).toEqual([782, 79, 64, 13, 1, 1]);
    const e = embedded({ cacheEntriesMax: 10_000 });
    const v = e.getState<ValueState<number>>(new ValueStateDescriptor('v'));
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 30_000; i++) {
      setKey(e, i);
      v.update(i);
      if (i >= 10_000) least = Math.min(least, e.cachedEntries);
    }
    // A sweep stops once 79 went, past the end of the key group it is in (about 78 slots each here):
    // far above the eighth (8,750) a sweep left before.
    expect(least).toBeLessThanOrEqual(10_000 - 79);
    expect(least).toBeGreaterThan(10_000 - 3 * 79);
    for (let i = 0; i < 30_000; i += 11) {
      setKey(e, i);
      expect(v.value()).toBe(i);
    }
  });

  it('keeps keys apart as the heap backend does: 1, 1n, "1", true; -0 is 0', () => {
    const e = embedded({ cacheEntriesMax: 1 });
    const v = e.getState<ValueState<string>>(new ValueStateDescriptor('v'));
    const ks: Key[] = [1, 1n, '1', true, 2n ** 70n, -(2n ** 64n), 1.5, ''];
    ks.forEach((k, i) => {
      setKey(e, k);
      v.update(`v${i}`);
    });
    setKey(e, -0);
    v.update('zero');
    setKey(e, 0);
    expect(v.value()).toBe('zero');
    ks.forEach((k, i) => {
      setKey(e, k);
      expect(v.value()).toBe(`v${i}`);
    });
    expect(e.keyCounts()).toEqual({ v: ks.length + 1 });
  });

  it('says so when a key is too long for the store', () => {
    const e = embedded();
    const v = e.getState<ValueState<number>>(new ValueStateDescriptor('v'));
    setKey(e, 'x'.repeat(3000));
    expect(() => v.update(1)).toThrow(WeirError);
    expect(() => v.update(1)).toThrow(/too long for the embedded state backend/);
  });

  it('reports every change to the change listener like the heap backend', () => {
    const log = (into: unknown[]): StateChangeListener => ({ onChange: (...args) => void into.push(structuredClone(args)) });
    const seenE: unknown[] = [];
    const seenH: unknown[] = [];
    const e = embedded({ cacheEntriesMax: 3 });
    const h = heap();
    e.setChangeListener(log(seenE));
    h.setChangeListener(log(seenH));
    const r = new SeededRandom(7);
    for (let i = 0; i < 500; i++) randomOp(r, [e, h], 10);
    expect(seenE).toEqual(seenH);
  });

  it('works in a directory of its own under localDir, deleted on dispose', () => {
    const root = mkdtempSync(join(tmpdir(), 'weir-embedded-root-'));
    try {
      const e = embedded({ localDir: root, cacheEntriesMax: 2 });
      fill(e, keys(50));
      expect(readdirSync(root)).toHaveLength(1);
      expect(e.directory.startsWith(root)).toBe(true);
      e.dispose();
      expect(existsSync(e.directory)).toBe(false);
      expect(readdirSync(root)).toHaveLength(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
