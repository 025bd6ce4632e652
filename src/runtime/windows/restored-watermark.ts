/**
 * An operator's watermark across a restore (the window operator, the interval join). A restored operator's timer service starts
 * at the minimum watermark until its inputs send one again, so an element that was late before a
 * failure would be on time after it, and late data (side output, dropped counts) would depend on
 * where the job failed. The operator keeps the watermark it had at each snapshot in union
 * operator state, with the key groups of the subtask that had it, and takes, after a restore, the
 * lowest of the old subtasks' whose key groups overlap its own as a floor: every element replayed
 * after the snapshot (in-flight data is routed by key group) was processed under a watermark at
 * least that high before. The lowest over all old subtasks would be too low for a subtask whose
 * own snapshot came later in the stream (unaligned checkpoints take them at different points):
 * records it had seen late would be replayed on time.
 */
import { MIN_WATERMARK } from '../../core/watermark.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import type { KeyGroupRange } from '../../state/key-groups.ts';
import type { ListState } from '../../state/state.ts';
import type { OperatorStateStore } from '../../state/backend.ts';
import type { InternalTimerService } from '../time/timer-service.ts';

/** Before key groups were recorded: one watermark per old subtask, for every key group. Read, then cleared. */
const WATERMARKS_V1 = new ListStateDescriptor<number>('window-watermark');
/** `[first key group, last key group, watermark]` of each old subtask. */
const WATERMARKS = new ListStateDescriptor<[number, number, number]>('window-watermark-by-key-groups');

/** The floor for a subtask owning `range` (null: not keyed, every entry counts) from the old subtasks' entries. */
export function restoredFloor(v1: readonly number[], entries: ReadonlyArray<readonly [number, number, number]>, range: KeyGroupRange | null): number {
  const own = entries.filter(([start, end]) => range === null || (start <= range.end && end >= range.start)).map(([, , wm]) => wm);
  const all = [...v1, ...own];
  return all.length === 0 ? MIN_WATERMARK : Math.min(...all);
}

/** The operator's timer service with the restored watermark as a floor of `currentWatermark`. */
export class RestoredWatermarkTimers implements InternalTimerService {
  private readonly state: ListState<[number, number, number]>;
  private readonly v1: ListState<number>;
  private readonly floor: number;
  private readonly range: KeyGroupRange;

  constructor(
    private readonly timers: InternalTimerService,
    operatorState: OperatorStateStore,
    keyGroupRange: KeyGroupRange | null,
  ) {
    this.state = operatorState.getUnionListState(WATERMARKS);
    this.v1 = operatorState.getUnionListState(WATERMARKS_V1);
    this.floor = restoredFloor(this.v1.get(), this.state.get(), keyGroupRange);
    this.range = keyGroupRange ?? { start: 0, end: Number.MAX_SAFE_INTEGER };
  }

  /** Records the watermark of this snapshot with this subtask's key groups (sync phase). */
  snapshot(): void {
    this.state.update([[this.range.start, this.range.end, this.currentWatermark()]]);
    this.v1.update([]);
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
