/**
 * The built-in triggers: event time and processing time (the defaults of the time windows), count,
 * continuous event time, purging, and never (the default of the global window).
 */
import { JobDefinitionError } from '../../core/errors.ts';
import type { OnMergeContext, Trigger, TriggerContext, TriggerResult } from './trigger.ts';
import type { TimeWindow, Window } from './window.ts';

/**
 * Fires once the watermark passes the window's end (`maxTimestamp`), and again for every late
 * element while the window is kept (allowed lateness). The default trigger of event-time windows.
 */
export class EventTimeTrigger implements Trigger<unknown, TimeWindow> {
  readonly canMerge = true;
  private constructor() {}

  /** The event-time trigger. */
  static create(): EventTimeTrigger {
    return new EventTimeTrigger();
  }

  onElement(_element: unknown, _timestampMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult {
    if (window.maxTimestamp() <= ctx.currentWatermark()) return 'FIRE'; // late element of a kept window
    ctx.registerEventTimeTimer(window.maxTimestamp());
    return 'CONTINUE';
  }

  onEventTime(timeMs: number, window: TimeWindow, _ctx?: TriggerContext): TriggerResult {
    return timeMs === window.maxTimestamp() ? 'FIRE' : 'CONTINUE';
  }

  onProcessingTime(): TriggerResult {
    return 'CONTINUE';
  }

  onMerge(window: TimeWindow, ctx: OnMergeContext): void {
    // A merged window that is already complete fires on the next element or timer, not here.
    if (window.maxTimestamp() > ctx.currentWatermark()) ctx.registerEventTimeTimer(window.maxTimestamp());
  }

  clear(window: TimeWindow, ctx: TriggerContext): void {
    ctx.deleteEventTimeTimer(window.maxTimestamp());
  }
}

/**
 * Fires when processing time reaches the window's end. The default trigger of processing-time
 * windows. Its timer is at `end`, not `end - 1`: a processing-time timer fires once the clock
 * reached its time, and an element arriving in the window's last millisecond must still find it open.
 */
export class ProcessingTimeTrigger implements Trigger<unknown, TimeWindow> {
  readonly canMerge = true;
  private constructor() {}

  /** The processing-time trigger. */
  static create(): ProcessingTimeTrigger {
    return new ProcessingTimeTrigger();
  }

  onElement(_element: unknown, _timestampMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult {
    ctx.registerProcessingTimeTimer(window.end);
    return 'CONTINUE';
  }

  onEventTime(): TriggerResult {
    return 'CONTINUE';
  }

  onProcessingTime(timeMs: number, window: TimeWindow, _ctx?: TriggerContext): TriggerResult {
    return timeMs === window.end ? 'FIRE' : 'CONTINUE';
  }

  onMerge(window: TimeWindow, ctx: OnMergeContext): void {
    if (window.end > ctx.currentProcessingTime()) ctx.registerProcessingTimeTimer(window.end);
  }

  clear(window: TimeWindow, ctx: TriggerContext): void {
    ctx.deleteProcessingTimeTimer(window.end);
  }
}

/** Never fires: the default trigger of `GlobalWindows` (give it a trigger with `.trigger(...)`). */
export class NeverTrigger implements Trigger<unknown, Window> {
  readonly canMerge = true;
  private constructor() {}

  /** The trigger that never fires. */
  static create(): NeverTrigger {
    return new NeverTrigger();
  }

  onElement(): TriggerResult {
    return 'CONTINUE';
  }
  onEventTime(): TriggerResult {
    return 'CONTINUE';
  }
  onProcessingTime(): TriggerResult {
    return 'CONTINUE';
  }
  onMerge(): void {}
  clear(): void {}
}

const COUNT = 'count';

/** Fires when a window holds `n` elements since its last firing (the count restarts after each). */
export class CountTrigger implements Trigger<unknown, Window> {
  readonly canMerge = true;
  private constructor(
    /** Elements per firing. */
    readonly maxCount: number,
  ) {}

  /**
   * A count trigger.
   * @param maxCount elements per firing, an integer >= 1.
   * @throws JobDefinitionError when `maxCount` is not an integer >= 1.
   */
  static of(maxCount: number): CountTrigger {
    if (!Number.isInteger(maxCount) || maxCount < 1) throw new JobDefinitionError(`CountTrigger.of: maxCount must be an integer >= 1, got ${maxCount}`);
    return new CountTrigger(maxCount);
  }

  onElement(_element: unknown, _timestampMs: number, _window: Window, ctx: TriggerContext): TriggerResult {
    const state = ctx.getState<number>(COUNT);
    const count = (state.value() ?? 0) + 1;
    if (count >= this.maxCount) {
      state.clear();
      return 'FIRE';
    }
    state.update(count);
    return 'CONTINUE';
  }

  onEventTime(): TriggerResult {
    return 'CONTINUE';
  }

  onProcessingTime(): TriggerResult {
    return 'CONTINUE';
  }

  onMerge(_window: Window, ctx: OnMergeContext): void {
    const total = ctx.mergedStateValues<number>(COUNT).reduce((a, b) => a + b, ctx.getState<number>(COUNT).value() ?? 0);
    if (total > 0) ctx.getState<number>(COUNT).update(total);
  }

  clear(_window: Window, ctx: TriggerContext): void {
    ctx.getState<number>(COUNT).clear();
  }
}

const NEXT_FIRE = 'next-fire';

/**
 * Fires every `intervalMs` of event time while the window is open (early results), and at the
 * window's end. Firing times are aligned to multiples of the interval.
 */
export class ContinuousEventTimeTrigger implements Trigger<unknown, TimeWindow> {
  readonly canMerge = true;
  private constructor(
    /** Event time between firings, in milliseconds. */
    readonly intervalMs: number,
  ) {}

  /**
   * A continuous event-time trigger.
   * @param intervalMs event time between firings, in milliseconds (> 0).
   * @throws JobDefinitionError when `intervalMs` is not a positive number.
   */
  static of(intervalMs: number): ContinuousEventTimeTrigger {
    if (!(intervalMs > 0) || !Number.isFinite(intervalMs)) {
      throw new JobDefinitionError(`ContinuousEventTimeTrigger.of: intervalMs must be a positive number, got ${intervalMs}`);
    }
    return new ContinuousEventTimeTrigger(intervalMs);
  }

  onElement(_element: unknown, timestampMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult {
    if (window.maxTimestamp() <= ctx.currentWatermark()) return 'FIRE';
    ctx.registerEventTimeTimer(window.maxTimestamp());
    const next = ctx.getState<number>(NEXT_FIRE);
    if (next.value() === undefined) {
      const start = timestampMs - (((timestampMs % this.intervalMs) + this.intervalMs) % this.intervalMs);
      const fireAt = Math.min(start + this.intervalMs, window.maxTimestamp());
      ctx.registerEventTimeTimer(fireAt);
      next.update(fireAt);
    }
    return 'CONTINUE';
  }

  onEventTime(timeMs: number, window: TimeWindow, ctx: TriggerContext): TriggerResult {
    if (timeMs === window.maxTimestamp()) return 'FIRE';
    const next = ctx.getState<number>(NEXT_FIRE);
    if (next.value() === timeMs) {
      const fireAt = Math.min(timeMs + this.intervalMs, window.maxTimestamp());
      ctx.registerEventTimeTimer(fireAt);
      next.update(fireAt);
      return 'FIRE';
    }
    return 'CONTINUE';
  }

  onProcessingTime(): TriggerResult {
    return 'CONTINUE';
  }

  onMerge(window: TimeWindow, ctx: OnMergeContext): void {
    const candidates = ctx.mergedStateValues<number>(NEXT_FIRE);
    const own = ctx.getState<number>(NEXT_FIRE).value();
    if (own !== undefined) candidates.push(own);
    if (candidates.length > 0) {
      const fireAt = Math.min(...candidates);
      ctx.getState<number>(NEXT_FIRE).update(fireAt);
      ctx.registerEventTimeTimer(fireAt);
    }
    if (window.maxTimestamp() > ctx.currentWatermark()) ctx.registerEventTimeTimer(window.maxTimestamp());
  }

  clear(window: TimeWindow, ctx: TriggerContext): void {
    const next = ctx.getState<number>(NEXT_FIRE);
    const fireAt = next.value();
    if (fireAt !== undefined) ctx.deleteEventTimeTimer(fireAt);
    next.clear();
    ctx.deleteEventTimeTimer(window.maxTimestamp());
  }
}

/** Wraps a trigger so that every firing also purges the window (FIRE becomes FIRE_AND_PURGE). */
export class PurgingTrigger<T, W extends Window> implements Trigger<T, W> {
  readonly canMerge: boolean;
  private constructor(
    /** The trigger whose firings purge. */
    readonly nested: Trigger<T, W>,
  ) {
    this.canMerge = nested.canMerge;
  }

  /** A purging version of `nested`. */
  static of<T, W extends Window>(nested: Trigger<T, W>): PurgingTrigger<T, W> {
    return new PurgingTrigger(nested);
  }

  onElement(element: T, timestampMs: number, window: W, ctx: TriggerContext): TriggerResult {
    return purging(this.nested.onElement(element, timestampMs, window, ctx));
  }

  onEventTime(timeMs: number, window: W, ctx: TriggerContext): TriggerResult {
    return purging(this.nested.onEventTime(timeMs, window, ctx));
  }

  onProcessingTime(timeMs: number, window: W, ctx: TriggerContext): TriggerResult {
    return purging(this.nested.onProcessingTime(timeMs, window, ctx));
  }

  onMerge(window: W, ctx: OnMergeContext): void {
    this.nested.onMerge?.(window, ctx);
  }

  clear(window: W, ctx: TriggerContext): void {
    this.nested.clear(window, ctx);
  }
}

function purging(result: TriggerResult): TriggerResult {
  return result === 'FIRE' ? 'FIRE_AND_PURGE' : result;
}
