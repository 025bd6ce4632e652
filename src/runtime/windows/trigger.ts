/**
 * Triggers decide when a window's contents are handed to the window function (fire) and when they
 * are dropped (purge). A trigger object is shared by every key and window of a subtask: it keeps
 * what it must remember (a count, the next firing time) in per-window state through its context,
 * so that state is checkpointed, restored and rescaled with the window.
 */
import type { Window } from './window.ts';

/** What a trigger decides on an element or a timer. */
export type TriggerResult = 'CONTINUE' | 'FIRE' | 'PURGE' | 'FIRE_AND_PURGE';

/** The four trigger results by name. */
export const TriggerResult = {
  /** Do nothing. */
  CONTINUE: 'CONTINUE',
  /** Evaluate the window function on the contents; keep the contents. */
  FIRE: 'FIRE',
  /** Drop the contents without evaluating. */
  PURGE: 'PURGE',
  /** Evaluate the window function, then drop the contents. */
  FIRE_AND_PURGE: 'FIRE_AND_PURGE',
} as const satisfies Record<TriggerResult, TriggerResult>;

/** A trigger's value state, scoped to the current key and window. */
export interface TriggerState<T> {
  /** The value, or undefined when none was set. */
  value(): T | undefined;
  /** Sets the value. */
  update(value: T): void;
  /** Removes the value. */
  clear(): void;
}

/** What a trigger can reach: time, timers and state of the current key and window. */
export interface TriggerContext {
  /** The operator's event-time watermark in milliseconds (`-Infinity` before the first one). */
  currentWatermark(): number;
  /** The processing time in milliseconds (the job's Clock). */
  currentProcessingTime(): number;
  /** Calls `onEventTime` for this key and window once the watermark reaches `timeMs`. Deduplicated per time. */
  registerEventTimeTimer(timeMs: number): void;
  /** Removes an event-time timer of this key and window. */
  deleteEventTimeTimer(timeMs: number): void;
  /** Calls `onProcessingTime` for this key and window once processing time reaches `timeMs`. */
  registerProcessingTimeTimer(timeMs: number): void;
  /** Removes a processing-time timer of this key and window. */
  deleteProcessingTimeTimer(timeMs: number): void;
  /**
   * The trigger's value state `name`, scoped to the current key and window. Values must be
   * serialisable with msgpack; `clear` must clear every state the trigger used.
   */
  getState<T>(name: string): TriggerState<T>;
}

/** The context of `onMerge`: also reads the trigger's state in the windows being merged away. */
export interface OnMergeContext extends TriggerContext {
  /** The values of state `name` in the merged windows that had one (before they are cleared). */
  mergedStateValues<T>(name: string): T[];
}

/**
 * Decides when a window fires. `canMerge` must be true for use with merging (session) windows, and
 * then `onMerge` is called on the window that several windows merged into.
 */
export interface Trigger<T, W extends Window = Window> {
  /** Called for every element added to a window. */
  onElement(element: T, timestampMs: number, window: W, ctx: TriggerContext): TriggerResult;
  /** Called when an event-time timer this trigger registered for the window fires. */
  onEventTime(timeMs: number, window: W, ctx: TriggerContext): TriggerResult;
  /** Called when a processing-time timer this trigger registered for the window fires. */
  onProcessingTime(timeMs: number, window: W, ctx: TriggerContext): TriggerResult;
  /** Whether the trigger supports merging windows (`onMerge`). */
  readonly canMerge: boolean;
  /** Called after windows merged into `window`: carry state over, register timers. */
  onMerge?(window: W, ctx: OnMergeContext): void;
  /** Called when the window is removed: delete the trigger's timers and state. */
  clear(window: W, ctx: TriggerContext): void;
}
