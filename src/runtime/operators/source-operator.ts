/** Runs a SourceReader at the head of a source subtask, with the source's watermark strategy if it has one. */
import type { CheckpointId } from '../../core/ids.ts';
import { NO_TIMESTAMP } from '../../core/watermark.ts';
import type { Collector } from '../functions.ts';
import { AbstractStreamOperator, type PollStatus, type SourceOperator } from '../operator.ts';
import type { SourceReader } from '../source.ts';
import { WatermarkEmission } from '../time/watermark-emission.ts';
import type { WatermarkStrategy } from '../time/watermark-strategy.ts';
import { createRuntimeContext } from './runtime-context.ts';

export class SourceReaderOperator extends AbstractStreamOperator implements SourceOperator {
  readonly isSource = true as const;
  recordsOut = 0;
  private counting!: Collector<unknown>;
  private emission: WatermarkEmission<unknown> | null = null;
  constructor(
    private readonly reader: SourceReader<unknown>,
    private readonly watermarks: WatermarkStrategy<unknown> | null = null,
  ) {
    super();
  }
  override open(): Promise<void> | void {
    const output = this.ctx.output;
    const ts = this.ctx.timestamps;
    if (this.watermarks) {
      const emission = new WatermarkEmission(this.watermarks, this.ctx);
      this.emission = emission;
      this.counting = {
        collect: (record) => {
          this.recordsOut++;
          ts.current = NO_TIMESTAMP;
          emission.onRecord(record, output);
        },
      };
      emission.start();
    } else {
      this.counting = {
        collect: (record) => {
          this.recordsOut++;
          ts.current = NO_TIMESTAMP;
          output.collect(record);
        },
      };
    }
    return this.reader.open(createRuntimeContext(this.ctx));
  }
  poll(maxRecords: number): PollStatus {
    return this.reader.poll(this.counting, maxRecords);
  }
  processElement(): void {
    throw new Error('a source operator has no input');
  }
  /** Only the task calls this on a source: with the maximum watermark when the input ended. */
  override processWatermark(watermarkMs: number): void {
    if (this.emission) this.emission.finish();
    else this.ctx.output.emitWatermark(watermarkMs);
  }
  override snapshotState(checkpointId: CheckpointId): void {
    this.reader.snapshotState(checkpointId);
  }
  override notifyCheckpointComplete(checkpointId: CheckpointId): Promise<void> | void {
    return this.reader.notifyCheckpointComplete?.(checkpointId);
  }
  override notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.reader.notifyCheckpointAborted?.(checkpointId);
  }
  override close(): void {
    this.emission?.stop();
    this.reader.close();
  }
  override dispose(): void {
    this.emission?.stop();
    try {
      this.reader.close();
    } catch {
      // teardown must not throw
    }
  }
}
