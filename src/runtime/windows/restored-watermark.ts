/**
 * An operator's watermark across a restore (the window operator, the interval join). A restored operator's timer service starts
 * at the minimum watermark until its inputs send one again, so an element that was late before a
 * failure would be on time after it, and late data (side output, dropped counts) would depend on
 * where the job failed. The operator keeps the watermark it had at each snapshot in union
 * operator state and takes, after a restore, the lowest of the old subtasks' as a floor: every
 * element replayed after the snapshot was processed under a watermark at least that high before.
 */
import { MIN_WATERMARK } from '../../core/watermark.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import type { ListState } from '../../state/state.ts';
import type { OperatorStateStore } from '../../state/backend.ts';
import type { InternalTimerService } from '../time/timer-service.ts';

const WATERMARKS = new ListStateDescriptor<number>('window-watermark');

/** The operator's timer service with the restored watermark as a floor of `currentWatermark`. */
export class RestoredWatermarkTimers implements InternalTimerService {
  private readonly state: ListState<number>;
  private readonly floor: number;

  constructor(
    private readonly timers: InternalTimerService,
    operatorState: OperatorStateStore,
  ) {
    this.state = operatorState.getUnionListState(WATERMARKS);
    const restored = this.state.get();
    this.floor = restored.length === 0 ? MIN_WATERMARK : Math.min(...restored);
  }

  /** Records the watermark of this snapshot (sync phase). */
  snapshot(): void {
    this.state.update([this.currentWatermark()]);
  }

  currentWatermark(): number {
    const wm = this.timers.currentWatermark();
    return Math.max(wm, this.floor);
  }
  currentProcessingTime(): number {
    return this.timers.currentProcessingTime();
  }
  registerEventTimeTimer(namespace: string, timeMs: number): void {
    this.timers.registerEventTimeTimer(namespace, timeMs);
  }
  deleteEventTimeTimer(namespace: string, timeMs: number): void {
    this.timers.deleteEventTimeTimer(namespace, timeMs);
  }
  registerProcessingTimeTimer(namespace: string, timeMs: number): void {
    this.timers.registerProcessingTimeTimer(namespace, timeMs);
  }
  deleteProcessingTimeTimer(namespace: string, timeMs: number): void {
    this.timers.deleteProcessingTimeTimer(namespace, timeMs);
  }
}
