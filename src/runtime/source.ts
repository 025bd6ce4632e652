/**
 * The interface sources implement. A reader runs in one source subtask: it restores its position
 * from operator state in `open`, emits records on `poll`, and writes its position back into
 * operator state on `snapshotState` (the sync phase of each checkpoint).
 */
import type { Collector, RuntimeContext } from './functions.ts';
import type { PollStatus } from './operator.ts';

export interface SourceReader<T> {
  open(ctx: RuntimeContext): void;
  poll(out: Collector<T>, maxRecords: number): PollStatus;
  snapshotState(checkpointId: number): void;
  close(): void;
}

export interface Source<T> {
  readonly name: string;
  /** Whether the source ends by itself (bounded) or runs until cancelled. */
  readonly bounded: boolean;
  createReader(): SourceReader<T>;
}
