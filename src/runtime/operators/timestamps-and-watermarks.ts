/**
 * `DataStream.assignTimestampsAndWatermarks`: gives each record a timestamp and generates
 * watermarks from this point on. Watermarks from upstream are dropped (this operator's generator
 * replaces them), except the maximum one at end of input.
 */
import { MAX_WATERMARK } from '../../core/watermark.ts';
import { AbstractStreamOperator } from '../operator.ts';
import { WatermarkEmission } from '../time/watermark-emission.ts';
import type { WatermarkStrategy } from '../time/watermark-strategy.ts';

export class TimestampsAndWatermarksOperator extends AbstractStreamOperator {
  private emission!: WatermarkEmission<unknown>;
  constructor(private readonly strategy: WatermarkStrategy<unknown>) {
    super();
  }
  override open(): void {
    this.emission = new WatermarkEmission(this.strategy, this.ctx);
    this.emission.start();
  }
  processElement(record: unknown): void {
    this.emission.onRecord(record, this.ctx.output);
  }
  override processWatermark(watermarkMs: number): void {
    if (watermarkMs === MAX_WATERMARK) this.emission.finish();
  }
  override close(): void {
    this.emission.stop();
  }
  override dispose(): void {
    this.emission?.stop();
  }
}
