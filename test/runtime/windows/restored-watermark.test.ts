import { describe, expect, it } from 'vitest';
import { ListStateDescriptor } from '../../../src/state/descriptors.ts';
import { HeapOperatorStateBackend } from '../../../src/state/heap/heap-operator-backend.ts';
import type { InternalTimerService } from '../../../src/runtime/time/timer-service.ts';
import { RestoredWatermarkTimers, restoredFloor } from '../../../src/runtime/windows/restored-watermark.ts';

/** The timer service's watermark, as the task would advance it. */
function service(): InternalTimerService & { watermark: number } {
  const s = {
    watermark: Number.NEGATIVE_INFINITY,
    currentWatermark: () => s.watermark,
    currentProcessingTime: () => 0,
    registerEventTimeTimer() {},
    deleteEventTimeTimer() {},
    registerProcessingTimeTimer() {},
    deleteProcessingTimeTimer() {},
  };
  return s;
}

describe('the watermark across a restore', () => {
  it('is the service watermark on a fresh operator, and is written at each snapshot', () => {
    const backend = new HeapOperatorStateBackend({ uid: 'w', subtask: 0 });
    const timers = service();
    const w = new RestoredWatermarkTimers(timers, backend, { start: 0, end: 63 });
    expect(w.currentWatermark()).toBe(Number.NEGATIVE_INFINITY);
    timers.watermark = 120;
    w.snapshot();
    expect(backend.getUnionListState(new ListStateDescriptor<[number, number, number]>('window-watermark-by-key-groups')).get()).toEqual([[0, 63, 120]]);
  });

  it('after a restore, the lowest of the old subtasks is a floor until the inputs send a higher one', () => {
    const backend = new HeapOperatorStateBackend({ uid: 'w', subtask: 0 });
    backend.getUnionListState(new ListStateDescriptor<number>('window-watermark')).update([300, 250, 410]); // as restored from 3 subtasks
    const timers = service();
    const w = new RestoredWatermarkTimers(timers, backend, { start: 0, end: 127 });
    expect(w.currentWatermark()).toBe(250);
    timers.watermark = 100;
    expect(w.currentWatermark()).toBe(250);
    timers.watermark = 500;
    expect(w.currentWatermark()).toBe(500);
  });

  it('takes the floor of the old subtasks whose key groups it owns, not the lowest of all (seed 100439: an unaligned snapshot of another subtask came earlier in the stream)', () => {
    // As restored from 4 subtasks of 128 key groups (seed 100439's watermarks).
    const entries: Array<[number, number, number]> = [
      [0, 31, 1090],
      [32, 63, 1150],
      [64, 95, 1099],
      [96, 127, 999],
    ];
    const backend = new HeapOperatorStateBackend({ uid: 'w', subtask: 2 });
    backend.getUnionListState(new ListStateDescriptor<[number, number, number]>('window-watermark-by-key-groups')).update(entries);
    const w = new RestoredWatermarkTimers(service(), backend, { start: 64, end: 95 });
    expect(w.currentWatermark()).toBe(1099);
    // Rescaled: a subtask owning key groups of two old subtasks takes the lower of the two.
    expect(restoredFloor([], entries, { start: 50, end: 70 })).toBe(1099);
    expect(restoredFloor([], entries, { start: 90, end: 100 })).toBe(999);
    // Not keyed, or a savepoint written before key groups were recorded: the lowest of all.
    expect(restoredFloor([], entries, null)).toBe(999);
    expect(restoredFloor([300, 250], [], { start: 0, end: 10 })).toBe(250);
  });
});
