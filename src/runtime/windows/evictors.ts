/**
 * Evictors remove elements from a window's contents before or after the window function runs.
 * A windowed stream with an evictor keeps every element (no incremental aggregation).
 */
import { JobDefinitionError } from '../../core/errors.ts';
import type { Window } from './window.ts';

/** An element with its timestamp (NaN when it has none: processing time). */
export interface TimestampedValue<T> {
  /** The element. */
  readonly value: T;
  /** Its event time in milliseconds, or NaN. */
  readonly timestampMs: number;
}

/** What an evictor can read besides the elements. */
export interface EvictorContext {
  /** The operator's event-time watermark in milliseconds. */
  currentWatermark(): number;
  /** The processing time in milliseconds. */
  currentProcessingTime(): number;
}

/**
 * Returns the elements of a firing window to keep, in order; the others are removed. The evictors'
 * fields have this type, not `Evictor<T>['evictBefore']`, which includes undefined and makes a
 * consumer's `exactOptionalPropertyTypes` reject them as Evictors.
 */
export type EvictFunction<T, W extends Window = Window> = (
  elements: readonly TimestampedValue<T>[],
  window: W,
  ctx: EvictorContext,
) => readonly TimestampedValue<T>[];

/** Chooses which elements of a firing window stay; the others are removed from the window. */
export interface Evictor<T, W extends Window = Window> {
  /** Before the window function: returns the elements to keep (and to pass to the function), in order. */
  evictBefore?(elements: readonly TimestampedValue<T>[], window: W, ctx: EvictorContext): readonly TimestampedValue<T>[];
  /** After the window function: returns the elements to keep, in order. */
  evictAfter?(elements: readonly TimestampedValue<T>[], window: W, ctx: EvictorContext): readonly TimestampedValue<T>[];
}

/** Keeps the last `maxCount` elements of a window (the oldest are evicted). */
export class CountEvictor<T> implements Evictor<T> {
  readonly evictBefore?: EvictFunction<T>;
  readonly evictAfter?: EvictFunction<T>;
  private constructor(
    /** Elements kept. */
    readonly maxCount: number,
    doEvictAfter: boolean,
  ) {
    const keep = (elements: readonly TimestampedValue<T>[]) => (elements.length > maxCount ? elements.slice(elements.length - maxCount) : elements);
    if (doEvictAfter) this.evictAfter = keep;
    else this.evictBefore = keep;
  }

  /**
   * A count evictor.
   * @param maxCount elements kept, an integer >= 1.
   * @param doEvictAfter evict after the window function instead of before (default false).
   * @throws JobDefinitionError when `maxCount` is not an integer >= 1.
   */
  static of<T = unknown>(maxCount: number, doEvictAfter = false): CountEvictor<T> {
    if (!Number.isInteger(maxCount) || maxCount < 1) throw new JobDefinitionError(`CountEvictor.of: maxCount must be an integer >= 1, got ${maxCount}`);
    return new CountEvictor<T>(maxCount, doEvictAfter);
  }
}

/**
 * Keeps the elements whose timestamp is within `windowSizeMs` of the newest element's timestamp
 * (those at or before `newest - windowSizeMs` are evicted). Elements without timestamps are kept.
 */
export class TimeEvictor<T> implements Evictor<T> {
  readonly evictBefore?: EvictFunction<T>;
  readonly evictAfter?: EvictFunction<T>;
  private constructor(
    /** Event time kept before the newest element, in milliseconds. */
    readonly windowSizeMs: number,
    doEvictAfter: boolean,
  ) {
    const keep = (elements: readonly TimestampedValue<T>[]) => {
      let newest = Number.NEGATIVE_INFINITY;
      for (const e of elements) if (e.timestampMs > newest) newest = e.timestampMs;
      if (newest === Number.NEGATIVE_INFINITY) return elements;
      const cutoff = newest - windowSizeMs;
      return elements.filter((e) => !(e.timestampMs <= cutoff));
    };
    if (doEvictAfter) this.evictAfter = keep;
    else this.evictBefore = keep;
  }

  /**
   * A time evictor.
   * @param windowSizeMs how much event time before the newest element is kept, in milliseconds (>= 0).
   * @param doEvictAfter evict after the window function instead of before (default false).
   * @throws JobDefinitionError when `windowSizeMs` is negative or not finite.
   */
  static of<T = unknown>(windowSizeMs: number, doEvictAfter = false): TimeEvictor<T> {
    if (!(windowSizeMs >= 0) || !Number.isFinite(windowSizeMs)) {
      throw new JobDefinitionError(`TimeEvictor.of: windowSizeMs must be a number >= 0, got ${windowSizeMs}`);
    }
    return new TimeEvictor<T>(windowSizeMs, doEvictAfter);
  }
}
