import { describe, expect, it } from 'vitest';
import { EventTimeSessionWindows } from '../../../src/runtime/windows/assigners.ts';
import { MergingWindowSet, MergingWindowSets, type PersistedMergingSet } from '../../../src/runtime/windows/merging-window-set.ts';
import { mergeTimeWindows, TimeWindow } from '../../../src/runtime/windows/window.ts';

const sessions = EventTimeSessionWindows.withGap(10);
const w = (s: number, e: number) => new TimeWindow(s, e);
type Merge = [string, string[], string, string[]];

function add(set: MergingWindowSet, window: TimeWindow, merges: Merge[]): TimeWindow {
  return set.addWindow(window, (result, merged, stateResult, mergedStates) =>
    merges.push([`${result}`, merged.map(String), `${stateResult}`, mergedStates.map(String)]),
  );
}

describe('merging window set', () => {
  it('adds disjoint windows as their own state windows', () => {
    const set = MergingWindowSet.fromPersisted(sessions, undefined);
    const merges: Merge[] = [];
    expect(add(set, w(0, 10), merges)).toEqual(w(0, 10));
    expect(add(set, w(20, 30), merges)).toEqual(w(20, 30));
    expect(merges).toEqual([]);
    expect(set.getStateWindow(w(20, 30))).toEqual(w(20, 30));
    expect(set.size).toBe(2);
  });

  it('an element inside an open window that does not grow it is no merge', () => {
    const set = MergingWindowSet.fromPersisted(sessions, [[0, 10, 0, 10]]);
    const merges: Merge[] = [];
    expect(add(set, w(0, 10), merges)).toEqual(w(0, 10));
    expect(merges).toEqual([]);
    expect(set.size).toBe(1);
  });

  it('growing one window keeps its state window and reports the grown window as merged', () => {
    const set = MergingWindowSet.fromPersisted(sessions, [[0, 10, 0, 10]]);
    const merges: Merge[] = [];
    expect(add(set, w(5, 15), merges)).toEqual(w(0, 15));
    expect(merges).toEqual([['[0, 15)', ['[0, 10)'], '[0, 10)', []]]);
    expect(set.getStateWindow(w(0, 15))).toEqual(w(0, 10));
    expect(set.getStateWindow(w(0, 10))).toBeUndefined();
  });

  it('an element bridging two sessions merges them: one state window survives, the other is merged into it', () => {
    const set = MergingWindowSet.fromPersisted(sessions, [
      [0, 10, 0, 10],
      [15, 25, 15, 25],
    ]);
    const merges: Merge[] = [];
    expect(add(set, w(8, 18), merges)).toEqual(w(0, 25));
    expect(merges).toEqual([['[0, 25)', ['[0, 10)', '[15, 25)'], '[0, 10)', ['[15, 25)']]]);
    expect(set.size).toBe(1);
    expect(set.toPersisted()).toEqual([[0, 25, 0, 10]]);
  });

  it('state windows survive a persist round trip and retire removes a window', () => {
    const set = MergingWindowSet.fromPersisted(sessions, undefined);
    add(set, w(0, 10), []);
    add(set, w(5, 15), []);
    const again = MergingWindowSet.fromPersisted(sessions, set.toPersisted());
    expect(again.getStateWindow(w(0, 15))).toEqual(w(0, 10));
    again.retireWindow(w(0, 15));
    expect(again.size).toBe(0);
    expect(again.isChanged).toBe(true);
  });

  it('reference: out-of-order elements end in the sessions a sort-and-sweep computes', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) % 1000) / 1000;
    for (let round = 0; round < 50; round++) {
      const ts = Array.from({ length: 30 }, () => Math.floor(rand() * 300));
      const set = MergingWindowSet.fromPersisted(sessions, undefined);
      for (const t of ts) add(set, w(t, t + 10), []);
      const sorted = [...ts].sort((a, b) => a - b);
      const expected: number[][] = [];
      for (const t of sorted) {
        const last = expected.at(-1);
        if (last && t <= last[1]!) last[1] = Math.max(last[1]!, t + 10);
        else expected.push([t, t + 10]);
      }
      expect(
        set
          .toPersisted()
          .map(([s, e]) => [s, e])
          .sort((a, b) => a[0]! - b[0]!),
      ).toEqual(expected);
    }
  });

  it('kept in working form between elements (MergingWindowSets): the same merges, results and persisted values as rebuilding the set for every element', () => {
    let seed = 11;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) % 10_000) / 10_000;
    const sets = new MergingWindowSets(sessions);
    // Per key: the state value as a backend would hold it, for the rebuilt and the kept sets.
    const rebuiltState = new Map<number, PersistedMergingSet>();
    const keptState = new Map<number, PersistedMergingSet>();
    const lastKept = new Map<number, MergingWindowSet>();
    let reused = 0;
    for (let step = 0; step < 3_000; step++) {
      const key = Math.floor(rand() * 8);
      const rebuilt = MergingWindowSet.fromPersisted(sessions, rebuiltState.get(key));
      let keptValue = keptState.get(key);
      // Sometimes the backend hands back a copy (read from disk, restored): the set is parsed anew.
      if (keptValue !== undefined && rand() < 0.1) keptValue = structuredClone(keptValue);
      const kept = sets.load(key, keptValue);
      if (kept === lastKept.get(key)) reused++;
      lastKept.set(key, kept);
      const t = Math.floor(rand() * 2_000);
      const retire = rand() < 0.2 && rebuilt.size > 0;
      const merges: Merge[][] = [[], []];
      const results = [rebuilt, kept].map((set, i) => {
        if (retire) {
          const [start, end] = set.toPersisted()[0]!;
          set.retireWindow(w(start, end));
          return 'retired';
        }
        const actual = add(set, w(t, t + 10), merges[i]!);
        return `${actual} in ${set.getStateWindow(actual)}`;
      });
      expect(results[1]).toBe(results[0]);
      expect(merges[1]).toEqual(merges[0]);
      expect(kept.isChanged).toBe(rebuilt.isChanged);
      if (rebuilt.isChanged) {
        if (rebuilt.size === 0) rebuiltState.delete(key);
        else rebuiltState.set(key, rebuilt.toPersisted());
        const value = sets.save(key, kept);
        if (value === undefined) keptState.delete(key);
        else keptState.set(key, value);
      }
      expect(keptState.get(key)).toEqual(rebuiltState.get(key));
    }
    expect(reused).toBeGreaterThan(1_000);
  });

  it('a key finds its set while its state value is the one the set was saved as, and a new set for any other value', () => {
    const sets = new MergingWindowSets(sessions);
    const first = sets.load('k', undefined);
    add(first, w(0, 10), []);
    const v1 = sets.save('k', first)!;
    expect(sets.load('k', v1)).toBe(first);
    expect(sets.load('other', v1)).not.toBe(first);
    add(first, w(5, 15), []);
    const v2 = sets.save('k', first)!;
    expect(v2).toEqual([[0, 15, 0, 10]]);
    expect(sets.load('k', v2)).toBe(first);
    const fromOld = sets.load('k', v1);
    expect(fromOld).not.toBe(first);
    expect(fromOld.toPersisted()).toEqual([[0, 10, 0, 10]]);
    expect(sets.load('k', structuredClone(v1))).not.toBe(fromOld);
  });
});

describe('the one-session path', () => {
  /** Session windows merged by another function than `mergeTimeWindows` itself: the general path. */
  const generalSessions = Object.assign(EventTimeSessionWindows.withGap(10), {
    mergeWindows: (windows: readonly TimeWindow[]) => mergeTimeWindows(windows),
  });

  it('gives what the general path gives, element by element, over seeded random sessions', () => {
    let seed = 12345;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let oneSessionSteps = 0;
    for (let round = 0; round < 200; round++) {
      const fast = MergingWindowSet.fromPersisted(sessions, undefined);
      const general = MergingWindowSet.fromPersisted(generalSessions, undefined);
      let t = next(50);
      for (let step = 0; step < 30; step++) {
        t += next(4) === 0 ? 5 + next(20) : next(6) - 2;
        const length = 1 + next(12);
        if (fast.size <= 1) oneSessionSteps++;
        const fastMerges: Merge[] = [];
        const generalMerges: Merge[] = [];
        const a = add(fast, w(t, t + length), fastMerges);
        const b = add(general, w(t, t + length), generalMerges);
        expect(`${a}`).toBe(`${b}`);
        expect(fastMerges).toEqual(generalMerges);
        expect(fast.isChanged).toBe(general.isChanged);
        expect(fast.toPersisted()).toEqual(general.toPersisted());
        if (next(5) === 0 && fast.size > 0) {
          const first = fast.toPersisted()[0]!;
          fast.retireWindow(w(first[0], first[1]));
          general.retireWindow(w(first[0], first[1]));
        }
        fast.markSaved();
        general.markSaved();
      }
    }
    expect(oneSessionSteps).toBeGreaterThan(300);
  });
});
