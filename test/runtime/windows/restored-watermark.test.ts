import { describe, expect, it } from 'vitest';
import { ListStateDescriptor } from '../../../src/state/descriptors.ts';
import { HeapOperatorStateBackend } from '../../../src/state/heap/heap-operator-backend.ts';
import type { InternalTimerService } from '../../../src/runtime/time/timer-service.ts';
import { RestoredWatermarkTimers } from '../../../src/runtime/windows/restored-watermark.ts';

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
    const w = new RestoredWatermarkTimers(timers, backend);
    expect(w.currentWatermark()).toBe(Number.NEGATIVE_INFINITY);
    timers.watermark = 120;
    w.snapshot();
    expect(backend.getUnionListState(new ListStateDescriptor<number>('window-watermark')).get()).toEqual([120]);
  });

  it('after a restore, the lowest of the old subtasks is a floor until the inputs send a higher one', () => {
    const backend = new HeapOperatorStateBackend({ uid: 'w', subtask: 0 });
    backend.getUnionListState(new ListStateDescriptor<number>('window-watermark')).update([300, 250, 410]); // as restored from 3 subtasks
    const timers = service();
    const w = new RestoredWatermarkTimers(timers, backend);
    expect(w.currentWatermark()).toBe(250);
    timers.watermark = 100;
    expect(w.currentWatermark()).toBe(250);
    timers.watermark = 500;
    expect(w.currentWatermark()).toBe(500);
  });
});
