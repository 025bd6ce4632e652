/**
 * Runs a SourceReader at the head of a source subtask, with the source's watermark strategy if it
 * has one: the reader emits through a `ReaderOutput`, per split when it reads several, so each
 * split gets its own watermark generator and idleness (see watermark-multiplexer.ts).
 */
import type { CheckpointId } from '../../core/ids.ts';
import { NO_TIMESTAMP } from '../../core/watermark.ts';
import type { Collector } from '../functions.ts';
import { AbstractStreamOperator, type PollStatus, type SourceOperator } from '../operator.ts';
import type { ReaderOutput, SourceReader } from '../source.ts';
import { WatermarkMultiplexer } from '../time/watermark-multiplexer.ts';
import type { WatermarkStrategy } from '../time/watermark-strategy.ts';
import { createRuntimeContext } from './runtime-context.ts';

export class SourceReaderOperator extends AbstractStreamOperator implements SourceOperator {
  readonly isSource = true as const;
  recordsOut = 0;
  private readerOutput!: ReaderOutput<unknown>;
  private multiplexer: WatermarkMultiplexer<unknown> | null = null;
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
      const counting: Collector<unknown> = {
        collect: (record) => {
          this.recordsOut++;
          output.collect(record);
        },
      };
      const multiplexer = new WatermarkMultiplexer(this.watermarks, this.ctx, counting);
      this.multiplexer = multiplexer;
      this.readerOutput = multiplexer;
      multiplexer.start();
    } else {
      // Records without event time: while the register is untimed nothing resets it; once an
      // operator chained after this source marks it timed, each record resets what the last one set.
      const untimed = (record: unknown): void => {
        this.recordsOut++;
        output.collect(record);
      };
      const timed = (record: unknown): void => {
        this.recordsOut++;
        ts.current = NO_TIMESTAMP;
        output.collect(record);
      };
      // without watermarks every split emits straight downstream
      const counting: ReaderOutput<unknown> = {
        collect: untimed,
        createOutputForSplit: () => counting,
        releaseOutputForSplit: () => {},
      };
      ts.onTimed(() => {
        counting.collect = timed;
      });
      this.readerOutput = counting;
    }
    return this.reader.open(createRuntimeContext(this.ctx));
  }
  poll(maxRecords: number): PollStatus {
    return this.reader.poll(this.readerOutput, maxRecords);
  }
  processElement(): void {
    throw new Error('a source operator has no input');
  }
  /** Only the task calls this on a source: with the maximum watermark when the input ended. */
  override processWatermark(watermarkMs: number): void {
    if (this.multiplexer) this.multiplexer.finish();
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
    this.multiplexer?.stop();
    this.reader.close();
  }
  override dispose(): void {
    this.multiplexer?.stop();
    try {
      this.reader.close();
    } catch {
      // teardown must not throw
    }
  }
}
