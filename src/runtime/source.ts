/**
 * The interface sources implement. A reader runs in one source subtask: it restores its position
 * from operator state in `open`, emits records on `poll`, and writes its position back into
 * operator state on `snapshotState` (the sync phase of each checkpoint).
 */
import type { Collector, RuntimeContext } from './functions.ts';
import type { PollStatus } from './operator.ts';

/** Reads the records of one source subtask. */
export interface SourceReader<T> {
  /**
   * Called once per subtask and attempt: take the splits this subtask owns and restore their
   * positions from operator state. A returned promise (connecting to a server) is awaited before
   * the first poll; its rejection fails the subtask.
   */
  open(ctx: RuntimeContext): Promise<void> | void;
  /**
   * Emits up to `maxRecords` records through `out` without blocking; returns `POLL_MORE` while there
   * may be more (now or later) and `POLL_END` once this subtask's input is exhausted.
   */
  poll(out: Collector<T>, maxRecords: number): PollStatus;
  /** Writes the current positions into operator state (the sync phase of checkpoint `checkpointId`). */
  snapshotState(checkpointId: number): void;
  /**
   * Checkpoint `checkpointId` completed (durably written): positions up to its snapshot may now be
   * acknowledged to the external system (a replication slot's confirmed position, message acks).
   * A returned promise is awaited before the subtask finishes.
   */
  notifyCheckpointComplete?(checkpointId: number): Promise<void> | void;
  /** Checkpoint `checkpointId` was aborted; nothing it snapshotted will be restored. */
  notifyCheckpointAborted?(checkpointId: number): void;
  /** Called when the subtask ends. */
  close(): void;
}

/** A source: `StreamEnvironment.fromSource` creates one reader per subtask and attempt. */
export interface Source<T> {
  /** Display name of the source operator. */
  readonly name: string;
  /** Whether the source ends by itself (bounded) or runs until cancelled. */
  readonly bounded: boolean;
  /** A new reader for one subtask and attempt. */
  createReader(): SourceReader<T>;
}
