import { describe, expect, it } from 'vitest';
import { EventTimeSessionWindows } from '../../../src/runtime/windows/assigners.ts';
import { MergingWindowSet } from '../../../src/runtime/windows/merging-window-set.ts';
import { TimeWindow } from '../../../src/runtime/windows/window.ts';

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
});
