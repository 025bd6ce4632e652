/** Runs a SourceReader at the head of a source subtask. */
import type { CheckpointId } from '../../core/ids.ts';
import { AbstractStreamOperator, type Output, type PollStatus, type SourceOperator } from '../operator.ts';
import type { SourceReader } from '../source.ts';
import { createRuntimeContext } from './runtime-context.ts';

export class SourceReaderOperator extends AbstractStreamOperator implements SourceOperator {
  readonly isSource = true as const;
  recordsOut = 0;
  private counting!: Output;
  constructor(private readonly reader: SourceReader<unknown>) {
    super();
  }
  override open(): Promise<void> | void {
    const output = this.ctx.output;
    this.counting = {
      collect: (record) => {
        this.recordsOut++;
        output.collect(record);
      },
      sideOutput: (tagId, record) => output.sideOutput(tagId, record),
    };
    return this.reader.open(createRuntimeContext(this.ctx));
  }
  poll(maxRecords: number): PollStatus {
    return this.reader.poll(this.counting, maxRecords);
  }
  processElement(): void {
    throw new Error('a source operator has no input');
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
    this.reader.close();
  }
  override dispose(): void {
    try {
      this.reader.close();
    } catch {
      // teardown must not throw
    }
  }
}
