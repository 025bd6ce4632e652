import { describe, expect, it } from 'vitest';
import type { OnMergeContext } from '../../../src/runtime/windows/trigger.ts';
import { ContinuousEventTimeTrigger, CountTrigger, EventTimeTrigger, ProcessingTimeTrigger, PurgingTrigger } from '../../../src/runtime/windows/triggers.ts';
import { CountEvictor, TimeEvictor } from '../../../src/runtime/windows/evictors.ts';
import { GlobalWindow, TimeWindow } from '../../../src/runtime/windows/window.ts';

/** A trigger context over plain maps: the triggers' decisions are pure functions of it. */
function context(watermark = Number.NEGATIVE_INFINITY, now = 0) {
  const state = new Map<string, unknown>();
  const merged = new Map<string, unknown[]>();
  const eventTimers = new Set<number>();
  const procTimers = new Set<number>();
  const ctx: OnMergeContext & { watermark: number } = {
    watermark,
    currentWatermark: () => ctx.watermark,
    currentProcessingTime: () => now,
    registerEventTimeTimer: (t) => eventTimers.add(t),
    deleteEventTimeTimer: (t) => eventTimers.delete(t),
    registerProcessingTimeTimer: (t) => procTimers.add(t),
    deleteProcessingTimeTimer: (t) => procTimers.delete(t),
    getState: <T>(name: string) => ({
      value: () => state.get(name) as T | undefined,
      update: (v: T) => state.set(name, v),
      clear: () => state.delete(name),
    }),
    mergedStateValues: <T>(name: string) => (merged.get(name) ?? []) as T[],
  };
  return { ctx, state, merged, eventTimers, procTimers };
}

const w = new TimeWindow(0, 10);

describe('triggers', () => {
  it('event time: a timer at the window end, FIRE when it fires, FIRE at once for a late element', () => {
    const { ctx, eventTimers } = context();
    const t = EventTimeTrigger.create();
    expect(t.onElement(null, 3, w, ctx)).toBe('CONTINUE');
    expect([...eventTimers]).toEqual([9]);
    expect(t.onEventTime(9, w, ctx)).toBe('FIRE');
    expect(t.onEventTime(5, w, ctx)).toBe('CONTINUE');
    ctx.watermark = 9;
    expect(t.onElement(null, 3, w, ctx)).toBe('FIRE');
    t.clear(w, ctx);
    expect(eventTimers.size).toBe(0);
  });

  it('processing time: a processing timer at the window end (the clock reaching it closes the window)', () => {
    const { ctx, procTimers } = context();
    const t = ProcessingTimeTrigger.create();
    expect(t.onElement(null, Number.NaN, w, ctx)).toBe('CONTINUE');
    expect([...procTimers]).toEqual([10]);
    expect(t.onProcessingTime(9, w, ctx)).toBe('CONTINUE');
    expect(t.onProcessingTime(10, w, ctx)).toBe('FIRE');
  });

  it('count: fires every n elements and restarts; merging sums the counts', () => {
    const { ctx, state, merged } = context();
    const t = CountTrigger.of(3);
    const g = GlobalWindow.INSTANCE;
    expect([1, 2, 3, 4, 5, 6, 7].map(() => t.onElement(null, 0, g, ctx))).toEqual(['CONTINUE', 'CONTINUE', 'FIRE', 'CONTINUE', 'CONTINUE', 'FIRE', 'CONTINUE']);
    expect(state.get('count')).toBe(1);
    merged.set('count', [1]);
    t.onMerge(g, ctx);
    expect(state.get('count')).toBe(2);
    expect(t.onElement(null, 0, g, ctx)).toBe('FIRE');
    expect(() => CountTrigger.of(0)).toThrow(/maxCount/);
  });

  it('continuous event time: fires at aligned intervals and at the window end', () => {
    const big = new TimeWindow(0, 100);
    const { ctx, eventTimers, state } = context();
    const t = ContinuousEventTimeTrigger.of(30);
    expect(t.onElement(null, 12, big, ctx)).toBe('CONTINUE');
    expect([...eventTimers].sort((a, b) => a - b)).toEqual([30, 99]);
    const fire = (time: number) => {
      expect(eventTimers.delete(time)).toBe(true); // the timer service removes a timer as it fires
      return t.onEventTime(time, big, ctx);
    };
    expect(fire(30)).toBe('FIRE');
    expect(state.get('next-fire')).toBe(60);
    expect(fire(60)).toBe('FIRE');
    expect(fire(90)).toBe('FIRE');
    expect(state.get('next-fire')).toBe(99);
    expect(fire(99)).toBe('FIRE');
    t.clear(big, ctx);
    expect(eventTimers.size).toBe(0);
    expect(state.size).toBe(0);
  });

  it('purging turns every FIRE into FIRE_AND_PURGE', () => {
    const { ctx } = context();
    const t = PurgingTrigger.of(CountTrigger.of(2));
    expect(t.onElement(null, 0, w, ctx)).toBe('CONTINUE');
    expect(t.onElement(null, 0, w, ctx)).toBe('FIRE_AND_PURGE');
  });
});

describe('evictors', () => {
  const els = [1, 2, 3, 4, 5].map((v) => ({ value: v, timestampMs: v * 10 }));
  const ectx = { currentWatermark: () => 0, currentProcessingTime: () => 0 };
  it('count keeps the newest n, before or after the function', () => {
    expect(CountEvictor.of<number>(2).evictBefore!(els, w, ectx).map((e) => e.value)).toEqual([4, 5]);
    expect(CountEvictor.of<number>(2, true).evictBefore).toBeUndefined();
    expect(CountEvictor.of<number>(9, true).evictAfter!(els, w, ectx)).toHaveLength(5);
  });
  it('time keeps what is within the size of the newest timestamp', () => {
    expect(TimeEvictor.of<number>(20).evictBefore!(els, w, ectx).map((e) => e.value)).toEqual([4, 5]);
    expect(TimeEvictor.of<number>(10).evictBefore!(els, w, ectx).map((e) => e.value)).toEqual([5]);
    const untimed = els.map((e) => ({ value: e.value, timestampMs: Number.NEGATIVE_INFINITY }));
    expect(TimeEvictor.of<number>(0).evictBefore!(untimed, w, ectx)).toHaveLength(5);
  });
});
