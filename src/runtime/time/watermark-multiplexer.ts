/**
 * Watermarks of a source subtask per split, as Flink's `WatermarkOutputMultiplexer` with per-split
 * generators: each split (or the reader's main output, for readers without splits) gets its own
 * generator instance and idleness timer, and the subtask emits the minimum over its active splits.
 * A split idle for `idleTimeoutMs` of processing time stops counting; the subtask is idle only when
 * all its splits are; a split that sends again counts again, but the subtask's watermark never goes
 * back; a released (ended) split stops counting. Nothing here is checkpointed: after a restore every
 * split starts again from the minimum watermark (downstream operators keep their own floor).
 */
import { AssertionError, assert } from '../../core/assert.ts';
import { MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP } from '../../core/watermark.ts';
import type { Collector } from '../functions.ts';
import type { OperatorContext } from '../operator.ts';
import type { ReaderOutput } from '../source.ts';
import type { ElementTimestamp } from './element-timestamp.ts';
import { PeriodicRounds } from './periodic-rounds.ts';
import type { TimestampAssigner, WatermarkGenerator, WatermarkOutput, WatermarkStrategy } from './watermark-strategy.ts';

/** What the multiplexer uses of its operator's context. */
export type MultiplexerContext = Pick<OperatorContext, 'output' | 'timestamps' | 'processingTime' | 'autoWatermarkIntervalMs'>;

/** The id of the main output among the splits (split ids are the source's; this one is not a string). */
const MAIN = Symbol('main output');

/** One split's output: assigns timestamps, emits records, runs the split's generator and idleness. */
class SplitWatermarkOutput<T> implements Collector<T>, WatermarkOutput {
  /** The highest watermark this split's generator emitted. */
  watermarkMs = MIN_WATERMARK;
  idle = false;
  released = false;
  /** Whether a record went through (the main output must not have, when splits take over). */
  used = false;
  /** A record went through since the last periodic round (cheaper than reading the clock per record). */
  active = false;
  /** When a periodic round last saw this split active (or it was created or rejoined). */
  lastActivityMs: number;
  readonly generator: WatermarkGenerator<T> | null;

  constructor(
    readonly id: string | typeof MAIN,
    private readonly owner: WatermarkMultiplexer<T>,
    private readonly assigner: TimestampAssigner<T> | null,
    createGenerator: (() => WatermarkGenerator<T>) | null,
    nowMs: number,
  ) {
    this.generator = createGenerator === null ? null : createGenerator();
    this.lastActivityMs = nowMs;
  }

  collect(record: T): void {
    if (this.released) throw new AssertionError(`a record of split ${String(this.id)} after its output was released`);
    this.used = true;
    this.active = true;
    if (this.idle) this.markActive();
    const owner = this.owner;
    const timestampMs = this.assigner === null ? NO_TIMESTAMP : this.assigner(record, NO_TIMESTAMP);
    owner.timestamps.current = timestampMs;
    owner.downstream.collect(record);
    this.generator?.onEvent(record, timestampMs, this);
  }

  emitWatermark(watermarkMs: number): void {
    if (this.released || !(watermarkMs > this.watermarkMs)) return;
    this.watermarkMs = watermarkMs;
    if (this.idle) this.markActive();
    else this.owner.combine();
  }

  markIdle(): void {
    if (this.idle || this.released) return;
    this.idle = true;
    this.owner.combine();
  }

  markActive(): void {
    if (!this.idle || this.released) return;
    this.idle = false;
    this.lastActivityMs = this.owner.nowMs();
    this.owner.combine();
  }
}

/**
 * The `ReaderOutput` of a source subtask with a watermark strategy: per-split outputs with their
 * own generators, combined into the subtask's watermark and idleness.
 */
export class WatermarkMultiplexer<T> implements ReaderOutput<T> {
  private readonly assigner: TimestampAssigner<T> | null;
  private readonly createGenerator: (() => WatermarkGenerator<T>) | null;
  private readonly idleTimeoutMs: number | null;
  readonly timestamps: ElementTimestamp;
  /** The outputs that count (not released); the main output first until splits take over. */
  private readonly outputs: SplitWatermarkOutput<T>[] = [];
  private readonly bySplit = new Map<string, SplitWatermarkOutput<T>>();
  private main: SplitWatermarkOutput<T> | null;
  private lastEmittedMs = MIN_WATERMARK;
  private idle = false;
  /** Inside a periodic round: splits' updates are combined once at its end. */
  private deferred = false;
  private readonly rounds: PeriodicRounds;

  /**
   * Outputs for one source subtask: records go to `downstream` with their timestamp in the
   * subtask's register; watermarks and idleness go to `ctx.output`.
   */
  constructor(
    strategy: WatermarkStrategy<T>,
    private readonly ctx: MultiplexerContext,
    readonly downstream: Collector<T>,
  ) {
    this.assigner = strategy.timestampAssigner;
    this.createGenerator = strategy.createGenerator;
    this.idleTimeoutMs = strategy.idleTimeoutMs;
    this.timestamps = ctx.timestamps;
    if (this.assigner !== null) this.timestamps.markTimed();
    this.main = this.register(MAIN);

    this.rounds = new PeriodicRounds(ctx.processingTime, ctx.autoWatermarkIntervalMs, () => this.onPeriodic());
  }

  /** The job's processing time (for the split outputs' idleness). */
  nowMs(): number {
    return this.ctx.processingTime.now();
  }

  /** The main output: for readers that do not emit per split. */
  collect(record: T): void {
    assert(this.main !== null, 'a record on the main output of a reader that emits per split');
    this.main.collect(record);
  }

  createOutputForSplit(splitId: string): Collector<T> {
    const existing = this.bySplit.get(splitId);
    if (existing !== undefined) return existing;
    const main = this.main;
    if (main !== null) {
      assert(!main.used, 'a reader asked for a split output after emitting records on its main output');
      this.main = null;
      this.remove(main);
    }
    const output = this.register(splitId);
    this.bySplit.set(splitId, output);
    this.combine();
    return output;
  }

  releaseOutputForSplit(splitId: string): void {
    const output = this.bySplit.get(splitId);
    if (output === undefined) return;
    this.bySplit.delete(splitId);
    this.remove(output);
    this.combine();
  }

  private register(id: string | typeof MAIN): SplitWatermarkOutput<T> {
    const output = new SplitWatermarkOutput<T>(id, this, this.assigner, this.createGenerator, this.nowMs());
    this.outputs.push(output);
    return output;
  }

  private remove(output: SplitWatermarkOutput<T>): void {
    output.released = true;
    this.outputs.splice(this.outputs.indexOf(output), 1);
  }

  /** Starts periodic emission and idleness checks (when the strategy has a generator or idleness). */
  start(): void {
    if (this.createGenerator === null && this.idleTimeoutMs === null) return;
    this.rounds.start();
  }

  /**
   * Marks splits silent for `idleTimeoutMs` idle and asks the others' generators, then combines
   * once. Activity is noted per round, not per record (as Flink's idleness timer does): a split
   * goes idle between `idleTimeoutMs` and one interval more after its last record.
   */
  private onPeriodic(): void {
    const nowMs = this.nowMs();
    const timeoutMs = this.idleTimeoutMs;
    this.deferred = true;
    try {
      for (const output of this.outputs) {
        if (output.idle) continue;
        if (output.active) {
          output.active = false;
          output.lastActivityMs = nowMs;
        }
        if (timeoutMs !== null && nowMs - output.lastActivityMs >= timeoutMs) output.markIdle();
        else output.generator?.onPeriodicEmit(output);
      }
    } finally {
      this.deferred = false;
    }
    this.combine();
  }

  /**
   * The subtask's watermark and status from its outputs': idle when none is active, else the
   * minimum watermark of the active ones, emitted only when it is higher than the last one.
   */
  combine(): void {
    if (this.deferred || this.rounds.stopped) return;
    let minMs = MAX_WATERMARK;
    let active = false;
    for (const output of this.outputs)
      if (!output.idle) {
        active = true;
        if (output.watermarkMs < minMs) minMs = output.watermarkMs;
      }
    if (!active) {
      this.setIdle(true);
      return;
    }
    this.setIdle(false);
    if (minMs > this.lastEmittedMs) {
      this.lastEmittedMs = minMs;
      this.ctx.output.emitWatermark(minMs);
    }
  }

  private setIdle(idle: boolean): void {
    if (this.idle === idle) return;
    this.idle = idle;
    this.ctx.output.emitWatermarkStatus(idle);
  }

  /** End of input: the maximum watermark goes out (once) and periodic emission stops. */
  finish(): void {
    if (this.rounds.stopped) return;
    this.setIdle(false);
    if (MAX_WATERMARK > this.lastEmittedMs) {
      this.lastEmittedMs = MAX_WATERMARK;
      this.ctx.output.emitWatermark(MAX_WATERMARK);
    }
    this.stop();
  }

  /** Stops periodic emission; nothing is emitted afterwards. */
  stop(): void {
    this.rounds.stop();
  }
}
