/**
 * Window assigners: which windows an element belongs to. Tumbling, sliding and session windows in
 * event time (the element's timestamp) or processing time (the subtask's clock when it arrives),
 * and the global window.
 */
import { JobDefinitionError } from '../../core/errors.ts';
import type { Trigger } from './trigger.ts';
import { EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger } from './triggers.ts';
import { GlobalWindow, mergeTimeWindows, TimeWindow, type Window, windowStart } from './window.ts';

/** What an assigner can read besides the element. */
export interface WindowAssignerContext {
  /** The processing time in milliseconds (the job's Clock). */
  currentProcessingTime(): number;
}

/** Windows that merge into one (`WindowAssigner.mergeWindows`). */
export interface MergeGroup<W extends Window> {
  /** The window they merge into. */
  readonly result: W;
  /** The windows merged (two or more). */
  readonly merged: readonly W[];
}

/** Assigns each element to zero or more windows; gives the trigger used when none is set. */
export interface WindowAssigner<T, W extends Window> {
  /** Whether windows are in event time (timestamps and watermarks) rather than processing time. */
  readonly isEventTime: boolean;
  /** Whether windows merge (sessions): the assigner then has `mergeWindows`. */
  readonly isMerging: boolean;
  /** The windows of one element with timestamp `timestampMs` (NaN in processing time). */
  assignWindows(element: T, timestampMs: number, ctx: WindowAssignerContext): readonly W[];
  /** The trigger of a windowed stream that sets none. */
  defaultTrigger(): Trigger<T, W>;
  /** Merging assigners: which of `windows` merge, as groups (result and members). */
  mergeWindows?(windows: readonly W[]): Array<MergeGroup<W>>;
  /** A description for errors and the job graph. */
  toString(): string;
}

function checkSize(what: string, name: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0) throw new JobDefinitionError(`${what}: ${name} must be a positive integer of milliseconds, got ${value}`);
}

function checkOffset(what: string, offsetMs: number, periodMs: number): void {
  if (!Number.isInteger(offsetMs) || Math.abs(offsetMs) >= periodMs) {
    throw new JobDefinitionError(`${what}: offsetMs must be an integer with |offsetMs| < ${periodMs}, got ${offsetMs}`);
  }
}

/** Shared by the tumbling and sliding assigners of both time domains. */
abstract class AlignedWindows implements WindowAssigner<unknown, TimeWindow> {
  readonly isMerging = false;
  protected constructor(
    /** Window length in milliseconds. */
    readonly sizeMs: number,
    /** Distance between window starts in milliseconds (the size for tumbling windows). */
    readonly slideMs: number,
    /** Shift of the window starts from the epoch in milliseconds. */
    readonly offsetMs: number,
    /** Whether windows are in event time. */
    readonly isEventTime: boolean,
  ) {}

  /** The windows of the latest assignment: consecutive elements mostly share them (no allocation then). */
  private lastStart = Number.NaN;
  private last: readonly TimeWindow[] = [];

  assignWindows(_element: unknown, timestampMs: number, ctx: WindowAssignerContext): readonly TimeWindow[] {
    const ts = this.isEventTime ? timestampMs : Math.floor(ctx.currentProcessingTime());
    const start = windowStart(ts, this.offsetMs, this.slideMs);
    // With a size that is a multiple of the slide, the windows depend on the start alone.
    if (start === this.lastStart && this.sizeMs % this.slideMs === 0) return this.last;
    const windows: TimeWindow[] = [];
    for (let s = start; s > ts - this.sizeMs; s -= this.slideMs) windows.push(new TimeWindow(s, s + this.sizeMs));
    this.lastStart = start;
    this.last = windows;
    return windows;
  }

  defaultTrigger(): Trigger<unknown, TimeWindow> {
    return this.isEventTime ? EventTimeTrigger.create() : ProcessingTimeTrigger.create();
  }

  /** A description for errors and the job graph. */
  abstract toString(): string;
}

/** Tumbling (fixed, non-overlapping) windows of `sizeMs` in event time. */
export class TumblingEventTimeWindows extends AlignedWindows {
  /**
   * Windows `[k*size + offset, (k+1)*size + offset)`.
   * @param sizeMs window length in milliseconds (a positive integer).
   * @param offsetMs shift of the window starts from the epoch (default 0; |offset| < size), e.g. for time zones.
   * @throws JobDefinitionError on a bad size or offset.
   */
  static of(sizeMs: number, offsetMs = 0): TumblingEventTimeWindows {
    checkSize('TumblingEventTimeWindows.of', 'sizeMs', sizeMs);
    checkOffset('TumblingEventTimeWindows.of', offsetMs, sizeMs);
    return new TumblingEventTimeWindows(sizeMs, sizeMs, offsetMs, true);
  }
  /** A description for errors and the job graph. */
  toString(): string {
    return `TumblingEventTimeWindows(${this.sizeMs})`;
  }
}

/** Tumbling windows of `sizeMs` in processing time. */
export class TumblingProcessingTimeWindows extends AlignedWindows {
  /**
   * Windows `[k*size + offset, (k+1)*size + offset)` of the subtask's clock.
   * @param sizeMs window length in milliseconds (a positive integer).
   * @param offsetMs shift of the window starts (default 0; |offset| < size).
   * @throws JobDefinitionError on a bad size or offset.
   */
  static of(sizeMs: number, offsetMs = 0): TumblingProcessingTimeWindows {
    checkSize('TumblingProcessingTimeWindows.of', 'sizeMs', sizeMs);
    checkOffset('TumblingProcessingTimeWindows.of', offsetMs, sizeMs);
    return new TumblingProcessingTimeWindows(sizeMs, sizeMs, offsetMs, false);
  }
  /** A description for errors and the job graph. */
  toString(): string {
    return `TumblingProcessingTimeWindows(${this.sizeMs})`;
  }
}

/** Sliding (overlapping) windows of `sizeMs` starting every `slideMs`, in event time. */
export class SlidingEventTimeWindows extends AlignedWindows {
  /**
   * Each element belongs to about `size / slide` windows.
   * @param sizeMs window length in milliseconds (a positive integer).
   * @param slideMs distance between window starts in milliseconds (a positive integer, at most `sizeMs`).
   * @param offsetMs shift of the window starts (default 0; |offset| < slide).
   * @throws JobDefinitionError on a bad size, slide or offset.
   */
  static of(sizeMs: number, slideMs: number, offsetMs = 0): SlidingEventTimeWindows {
    checkSliding('SlidingEventTimeWindows.of', sizeMs, slideMs, offsetMs);
    return new SlidingEventTimeWindows(sizeMs, slideMs, offsetMs, true);
  }
  /** A description for errors and the job graph. */
  toString(): string {
    return `SlidingEventTimeWindows(${this.sizeMs}, ${this.slideMs})`;
  }
}

/** Sliding windows in processing time. */
export class SlidingProcessingTimeWindows extends AlignedWindows {
  /**
   * Each element belongs to about `size / slide` windows of the subtask's clock.
   * @param sizeMs window length in milliseconds (a positive integer).
   * @param slideMs distance between window starts (a positive integer, at most `sizeMs`).
   * @param offsetMs shift of the window starts (default 0; |offset| < slide).
   * @throws JobDefinitionError on a bad size, slide or offset.
   */
  static of(sizeMs: number, slideMs: number, offsetMs = 0): SlidingProcessingTimeWindows {
    checkSliding('SlidingProcessingTimeWindows.of', sizeMs, slideMs, offsetMs);
    return new SlidingProcessingTimeWindows(sizeMs, slideMs, offsetMs, false);
  }
  /** A description for errors and the job graph. */
  toString(): string {
    return `SlidingProcessingTimeWindows(${this.sizeMs}, ${this.slideMs})`;
  }
}

function checkSliding(what: string, sizeMs: number, slideMs: number, offsetMs: number): void {
  checkSize(what, 'sizeMs', sizeMs);
  checkSize(what, 'slideMs', slideMs);
  if (slideMs > sizeMs) throw new JobDefinitionError(`${what}: slideMs (${slideMs}) must not exceed sizeMs (${sizeMs})`);
  checkOffset(what, offsetMs, slideMs);
}

/** Session windows: `[ts, ts + gap)` per element, merged while they overlap. */
abstract class SessionWindows implements WindowAssigner<unknown, TimeWindow> {
  readonly isMerging = true;
  protected constructor(
    /** Inactivity that closes a session, in milliseconds. */
    readonly gapMs: number,
    /** Whether sessions are in event time. */
    readonly isEventTime: boolean,
  ) {}

  assignWindows(_element: unknown, timestampMs: number, ctx: WindowAssignerContext): readonly TimeWindow[] {
    const ts = this.isEventTime ? timestampMs : Math.floor(ctx.currentProcessingTime());
    return [new TimeWindow(ts, ts + this.gapMs)];
  }

  defaultTrigger(): Trigger<unknown, TimeWindow> {
    return this.isEventTime ? EventTimeTrigger.create() : ProcessingTimeTrigger.create();
  }

  /** Overlapping or touching sessions merge (the function itself: `MergingWindowSet` recognises it and takes its one-session path). */
  readonly mergeWindows: (windows: readonly TimeWindow[]) => Array<MergeGroup<TimeWindow>> = mergeTimeWindows;

  /** A description for errors and the job graph. */
  abstract toString(): string;
}

/** Session windows in event time: a key's session ends after `gapMs` without elements. */
export class EventTimeSessionWindows extends SessionWindows {
  /**
   * Sessions with a fixed gap.
   * @param gapMs inactivity that closes a session, in milliseconds (a positive integer).
   * @throws JobDefinitionError on a bad gap.
   */
  static withGap(gapMs: number): EventTimeSessionWindows {
    checkSize('EventTimeSessionWindows.withGap', 'gapMs', gapMs);
    return new EventTimeSessionWindows(gapMs, true);
  }
  /** A description for errors and the job graph. */
  toString(): string {
    return `EventTimeSessionWindows(${this.gapMs})`;
  }
}

/** Session windows in processing time. */
export class ProcessingTimeSessionWindows extends SessionWindows {
  /**
   * Sessions with a fixed gap of the subtask's clock.
   * @param gapMs inactivity that closes a session, in milliseconds (a positive integer).
   * @throws JobDefinitionError on a bad gap.
   */
  static withGap(gapMs: number): ProcessingTimeSessionWindows {
    checkSize('ProcessingTimeSessionWindows.withGap', 'gapMs', gapMs);
    return new ProcessingTimeSessionWindows(gapMs, false);
  }
  /** A description for errors and the job graph. */
  toString(): string {
    return `ProcessingTimeSessionWindows(${this.gapMs})`;
  }
}

/** Puts every element in the one global window; it fires only through a trigger set with `.trigger(...)`. */
export class GlobalWindows implements WindowAssigner<unknown, GlobalWindow> {
  readonly isEventTime = false;
  readonly isMerging = false;
  private static readonly WINDOWS = [GlobalWindow.INSTANCE] as const;
  private constructor() {}

  /** The global-window assigner. */
  static create(): GlobalWindows {
    return new GlobalWindows();
  }

  assignWindows(): readonly GlobalWindow[] {
    return GlobalWindows.WINDOWS;
  }

  defaultTrigger(): Trigger<unknown, GlobalWindow> {
    return NeverTrigger.create();
  }

  /** A description for errors and the job graph. */
  toString(): string {
    return 'GlobalWindows';
  }
}
