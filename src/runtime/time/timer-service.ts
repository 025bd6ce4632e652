/**
 * The timer service operators use (the window operator, the keyed process operator): event-time
 * and processing-time timers per (key, namespace, time), stored as keyed state of the operator so
 * they are in every snapshot and move with their key group on rescale.
 */
import type { KeyGroup } from '../../core/ids.ts';
import type { Key } from '../../state/key-groups.ts';

/** Timers of one named service of a keyed operator; registration applies to the current key. */
export interface InternalTimerService {
  /** Fires `onEventTime` once the watermark reaches `timeMs`; registering the same (key, namespace, time) again is a no-op. */
  registerEventTimeTimer(namespace: string, timeMs: number): void;
  /** Removes a pending event-time timer of the current key; absent ones are ignored. */
  deleteEventTimeTimer(namespace: string, timeMs: number): void;
  /** Fires `onProcessingTime` once the job's clock reaches `timeMs`. */
  registerProcessingTimeTimer(namespace: string, timeMs: number): void;
  deleteProcessingTimeTimer(namespace: string, timeMs: number): void;
  /** The operator's current input watermark (MIN_WATERMARK = -Infinity before the first). */
  currentWatermark(): number;
  /** The job's clock in milliseconds. */
  currentProcessingTime(): number;
}

/** What a timer service calls back; the timer's key is already current in the keyed backend. */
export interface Triggerable {
  onEventTime(key: Key, keyGroup: KeyGroup, namespace: string, timeMs: number): void;
  onProcessingTime(key: Key, keyGroup: KeyGroup, namespace: string, timeMs: number): void;
}

/** The timer services of one operator subtask: what the task and AbstractStreamOperator drive. */
export interface InternalTimeServiceManager {
  /** The service of that name (created on first use, its pending timers restored from state). */
  getInternalTimerService(name: string, triggerable: Triggerable): InternalTimerService;
  /** The input watermark advanced: fires every event-time timer at or below it, in time order. */
  advanceWatermark(watermarkMs: number): void;
  /** The operator's current input watermark. */
  currentWatermark(): number;
  /** Stops processing-time callbacks (the subtask ended). */
  dispose(): void;
}
