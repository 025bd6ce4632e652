/**
 * How a stream gets event time: a timestamp assigner and a watermark generator, per source
 * (`env.fromSource(source, name, { watermarks })`) or per stream (`assignTimestampsAndWatermarks`).
 */
import { ConfigError } from '../../core/errors.ts';
import { MIN_WATERMARK } from '../../core/watermark.ts';

/** Where a watermark generator emits. */
export interface WatermarkOutput {
  /** Emits a watermark: no record with a timestamp at or below `watermarkMs` is expected any more. Lower or equal ones than before are ignored. */
  emitWatermark(watermarkMs: number): void;
  /** This stream sends nothing for now: downstream operators stop waiting for its watermark. */
  markIdle(): void;
  /** This stream sends records again (emitting a watermark or a record also does this). */
  markActive(): void;
}

/**
 * Generates watermarks from the records it sees and/or periodically. One instance per split of a
 * split source (per subtask for other sources and for `assignTimestampsAndWatermarks`) and attempt.
 */
export interface WatermarkGenerator<T> {
  /** Called for every record with its assigned timestamp (ms); may emit a watermark. */
  onEvent(event: T, timestampMs: number, output: WatermarkOutput): void;
  /** Called every `autoWatermarkIntervalMs` of the job's clock; may emit a watermark. */
  onPeriodicEmit(output: WatermarkOutput): void;
}

/** Gives each record its event time in milliseconds; `previousTimestamp` is the one it had (or -Infinity). */
export type TimestampAssigner<T> = (event: T, previousTimestamp: number) => number;

/** Bounded out-of-orderness: the watermark trails the highest timestamp seen by the bound (plus 1 ms, as Flink does). */
class BoundedOutOfOrdernessGenerator<T> implements WatermarkGenerator<T> {
  private maxTimestamp = MIN_WATERMARK;
  constructor(private readonly maxOutOfOrdernessMs: number) {}
  onEvent(_event: T, timestampMs: number): void {
    if (timestampMs > this.maxTimestamp) this.maxTimestamp = timestampMs;
  }
  onPeriodicEmit(output: WatermarkOutput): void {
    if (this.maxTimestamp !== MIN_WATERMARK) output.emitWatermark(this.maxTimestamp - this.maxOutOfOrdernessMs - 1);
  }
}

/**
 * A watermark strategy: immutable; each `with*` returns a new one.
 * @typeParam T the record type of the stream it applies to
 */
export class WatermarkStrategy<T> {
  private constructor(
    /** @internal creates the generator of a subtask; null: no watermarks */
    readonly createGenerator: (() => WatermarkGenerator<T>) | null,
    /** @internal */
    readonly timestampAssigner: TimestampAssigner<T> | null,
    /** @internal */
    readonly idleTimeoutMs: number | null,
  ) {}

  /**
   * Watermarks that trail the highest timestamp seen by `maxOutOfOrdernessMs`: records up to that
   * much out of order are on time.
   * @throws ConfigError when it is not a number >= 0.
   */
  static forBoundedOutOfOrderness<T>(maxOutOfOrdernessMs: number): WatermarkStrategy<T> {
    if (typeof maxOutOfOrdernessMs !== 'number' || !(maxOutOfOrdernessMs >= 0) || !Number.isFinite(maxOutOfOrdernessMs))
      throw new ConfigError('forBoundedOutOfOrderness', `maxOutOfOrdernessMs must be a finite number >= 0, got ${JSON.stringify(maxOutOfOrdernessMs)}`);
    return new WatermarkStrategy<T>(() => new BoundedOutOfOrdernessGenerator<T>(maxOutOfOrdernessMs), null, null);
  }

  /** Watermarks for timestamps that never decrease: the highest timestamp seen, minus 1 ms. */
  static forMonotonousTimestamps<T>(): WatermarkStrategy<T> {
    return WatermarkStrategy.forBoundedOutOfOrderness<T>(0);
  }

  /** Watermarks from a generator of your own; `factory` is called once per split (or subtask) and attempt. */
  static forGenerator<T>(factory: () => WatermarkGenerator<T>): WatermarkStrategy<T> {
    if (typeof factory !== 'function') throw new ConfigError('forGenerator', 'needs a function that creates a WatermarkGenerator');
    return new WatermarkStrategy<T>(factory, null, null);
  }

  /** Timestamps (with an assigner) but no watermarks: event-time timers and windows never fire before end of input. */
  static noWatermarks<T>(): WatermarkStrategy<T> {
    return new WatermarkStrategy<T>(null, null, null);
  }

  /** The same strategy, with each record's timestamp (ms) taken from `assigner`. */
  withTimestampAssigner(assigner: TimestampAssigner<T>): WatermarkStrategy<T> {
    if (typeof assigner !== 'function') throw new ConfigError('withTimestampAssigner', 'needs a function (event, previousTimestamp) => number');
    return new WatermarkStrategy<T>(this.createGenerator, assigner, this.idleTimeoutMs);
  }

  /**
   * The same strategy, marking the subtask idle after `idleTimeoutMs` of the job's clock without a
   * record, so it stops holding back the watermark downstream; the next record makes it active.
   * On a split source each split has its own timeout: an idle split stops holding back its
   * subtask's watermark, and the subtask goes idle only when all its splits are. Idleness is
   * checked every `autoWatermarkIntervalMs`, so it may take up to one interval longer.
   * @throws ConfigError when it is not a number > 0.
   */
  withIdleness(idleTimeoutMs: number): WatermarkStrategy<T> {
    if (typeof idleTimeoutMs !== 'number' || !(idleTimeoutMs > 0))
      throw new ConfigError('withIdleness', `idleTimeoutMs must be > 0, got ${JSON.stringify(idleTimeoutMs)}`);
    return new WatermarkStrategy<T>(this.createGenerator, this.timestampAssigner, idleTimeoutMs);
  }
}
