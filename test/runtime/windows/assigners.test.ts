import { describe, expect, it } from 'vitest';
import {
  EventTimeSessionWindows,
  GlobalWindows,
  SlidingEventTimeWindows,
  SlidingProcessingTimeWindows,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
} from '../../../src/runtime/windows/assigners.ts';
import { GlobalWindow, mergeTimeWindows, namespaceOf, TimeWindow, windowOfNamespace, windowStart } from '../../../src/runtime/windows/window.ts';
import { JobDefinitionError } from '../../../src/core/errors.ts';

const noClock = { currentProcessingTime: () => Number.NaN };
const ranges = (ws: readonly TimeWindow[]) => ws.map((w) => [w.start, w.end]);

describe('window assigners', () => {
  it('tumbling windows are aligned to the epoch plus the offset, negative timestamps included', () => {
    const t = TumblingEventTimeWindows.of(10);
    expect(ranges(t.assignWindows(null, 0, noClock))).toEqual([[0, 10]]);
    expect(ranges(t.assignWindows(null, 9, noClock))).toEqual([[0, 10]]);
    expect(ranges(t.assignWindows(null, 10, noClock))).toEqual([[10, 20]]);
    expect(ranges(t.assignWindows(null, -1, noClock))).toEqual([[-10, 0]]);
    expect(ranges(TumblingEventTimeWindows.of(10, 3).assignWindows(null, 2, noClock))).toEqual([[-7, 3]]);
    expect(windowStart(25, -3, 10)).toBe(17);
  });

  it('sliding windows: each element in size/slide windows, newest first', () => {
    const s = SlidingEventTimeWindows.of(10, 5);
    expect(ranges(s.assignWindows(null, 7, noClock))).toEqual([
      [5, 15],
      [0, 10],
    ]);
    expect(ranges(SlidingEventTimeWindows.of(10, 3).assignWindows(null, 7, noClock))).toEqual(
      [
        [6, 16],
        [3, 13],
        [0, 10],
        [-3, 7 + 0],
      ].filter(([start]) => start! > 7 - 10),
    );
  });

  it('reference: a sliding assignment equals every window [k*slide, k*slide+size) containing the timestamp', () => {
    for (const [size, slide] of [
      [10, 5],
      [10, 3],
      [7, 7],
      [100, 1],
    ] as const) {
      const a = SlidingEventTimeWindows.of(size, slide);
      for (let ts = -50; ts < 50; ts++) {
        const expected: number[][] = [];
        for (let k = -200; k < 200; k++) if (k * slide <= ts && ts < k * slide + size) expected.push([k * slide, k * slide + size]);
        expect(ranges(a.assignWindows(null, ts, noClock)).sort((x, y) => x[0]! - y[0]!)).toEqual(expected);
      }
    }
  });

  it('processing-time assigners read the clock, not the timestamp', () => {
    const clock = { currentProcessingTime: () => 1_234 };
    expect(ranges(TumblingProcessingTimeWindows.of(100).assignWindows(null, 5, clock))).toEqual([[1_200, 1_300]]);
    expect(ranges(SlidingProcessingTimeWindows.of(100, 50).assignWindows(null, 5, clock))).toEqual([
      [1_200, 1_300],
      [1_150, 1_250],
    ]);
    expect(TumblingProcessingTimeWindows.of(100).isEventTime).toBe(false);
  });

  it('sessions: one window [ts, ts+gap) per element, merged while overlapping or touching', () => {
    const s = EventTimeSessionWindows.withGap(10);
    expect(ranges(s.assignWindows(null, 5, noClock))).toEqual([[5, 15]]);
    const groups = s.mergeWindows([new TimeWindow(0, 10), new TimeWindow(30, 40), new TimeWindow(10, 20), new TimeWindow(5, 15), new TimeWindow(50, 60)]);
    expect(groups.map((g) => [g.result.start, g.result.end, g.merged.length])).toEqual([[0, 20, 3]]);
    expect(mergeTimeWindows([new TimeWindow(0, 10), new TimeWindow(11, 21)])).toEqual([]);
  });

  it('the global window holds everything and never fires by default', () => {
    const g = GlobalWindows.create();
    expect(g.assignWindows()).toEqual([GlobalWindow.INSTANCE]);
    expect(g.defaultTrigger().onElement(null, 0, GlobalWindow.INSTANCE, null as never)).toBe('CONTINUE');
  });

  it('namespaces round-trip', () => {
    for (const w of [new TimeWindow(-20, -10), new TimeWindow(0, 5), GlobalWindow.INSTANCE]) {
      expect(windowOfNamespace(namespaceOf(w)).equals(w)).toBe(true);
    }
  });

  it('rejects bad sizes, slides, offsets and gaps naming the assigner', () => {
    expect(() => TumblingEventTimeWindows.of(0)).toThrow(JobDefinitionError);
    expect(() => TumblingEventTimeWindows.of(10, 10)).toThrow(/offsetMs/);
    expect(() => SlidingEventTimeWindows.of(10, 20)).toThrow(/SlidingEventTimeWindows.of: slideMs/);
    expect(() => EventTimeSessionWindows.withGap(-1)).toThrow(/gapMs/);
    expect(() => TumblingProcessingTimeWindows.of(1.5)).toThrow(/sizeMs/);
  });
});
