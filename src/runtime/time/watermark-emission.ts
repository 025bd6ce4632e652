/**
 * Runs a WatermarkStrategy inside an operator (a source, or an assigner after any operator):
 * assigns timestamps, feeds the generator, asks it for periodic watermarks through the mailbox,
 * tracks idleness, and forwards only increasing watermarks downstream.
 */
import { MAX_WATERMARK, MIN_WATERMARK } from '../../core/watermark.ts';
import type { OperatorContext, Output } from '../operator.ts';
import { PeriodicRounds } from './periodic-rounds.ts';
import type { TimestampAssigner, WatermarkGenerator, WatermarkOutput, WatermarkStrategy } from './watermark-strategy.ts';

export class WatermarkEmission<T> implements WatermarkOutput {
  private readonly generator: WatermarkGenerator<T> | null;
  private readonly assigner: TimestampAssigner<T> | null;
  private readonly idleTimeoutMs: number | null;
  private lastEmittedMs = MIN_WATERMARK;
  private idle = false;
  private lastActivityMs: number;
  private readonly rounds: PeriodicRounds;

  constructor(
    strategy: WatermarkStrategy<T>,
    private readonly ctx: OperatorContext,
  ) {
    this.generator = strategy.createGenerator ? strategy.createGenerator() : null;
    this.assigner = strategy.timestampAssigner;
    if (this.assigner !== null) ctx.timestamps.markTimed();
    this.idleTimeoutMs = strategy.idleTimeoutMs;
    this.lastActivityMs = ctx.processingTime.now();

    this.rounds = new PeriodicRounds(ctx.processingTime, ctx.autoWatermarkIntervalMs, () => this.onPeriodic());
  }

  /** Starts periodic emission (and idleness checks). */
  start(): void {
    if (this.generator === null && this.idleTimeoutMs === null) return;
    this.rounds.start();
  }

  private onPeriodic(): void {
    if (this.idleTimeoutMs !== null && !this.idle && this.ctx.processingTime.now() - this.lastActivityMs >= this.idleTimeoutMs) {
      this.markIdle();
      return;
    }
    if (!this.idle) this.generator?.onPeriodicEmit(this);
  }

  /**
   * A record: its timestamp is assigned into the subtask's register, it is emitted, and then the
   * generator sees it (as Flink does: a watermark it derives from a record follows that record).
   */
  onRecord(record: T, output: Output): void {
    const ts = this.ctx.timestamps;
    if (this.assigner !== null) ts.current = this.assigner(record, ts.current);
    const timestampMs = ts.current;
    if (this.idleTimeoutMs !== null) {
      this.lastActivityMs = this.ctx.processingTime.now();
      if (this.idle) this.markActive();
    }
    output.collect(record);
    this.generator?.onEvent(record, timestampMs, this);
  }

  emitWatermark(watermarkMs: number): void {
    if (this.rounds.stopped || !(watermarkMs > this.lastEmittedMs)) return;
    if (this.idle) this.markActive();
    this.lastEmittedMs = watermarkMs;
    this.ctx.output.emitWatermark(watermarkMs);
  }

  markIdle(): void {
    if (this.idle || this.rounds.stopped) return;
    this.idle = true;
    this.ctx.output.emitWatermarkStatus(true);
  }

  markActive(): void {
    if (!this.idle) return;
    this.idle = false;
    this.lastActivityMs = this.ctx.processingTime.now();
    this.ctx.output.emitWatermarkStatus(false);
  }

  /** End of input: the maximum watermark goes out (once) and periodic emission stops. */
  finish(): void {
    if (this.idle) this.markActive();
    this.emitWatermark(MAX_WATERMARK);
    this.stop();
  }

  stop(): void {
    this.rounds.stop();
  }
}
