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
   * may be more (now or later) and `POLL_END` once this subtask's input is exhausted. In a job,
   * `out` is a `ReaderOutput` (see `isReaderOutput`): a reader of several splits emits each
   * split's records through that split's output, so each split gets its own watermarks.
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
  /**
   * What the source leaves in an external system once its job ended (cancelled, stopped or
   * finished) and keeps holding there until a user releases it (a replication slot holding WAL),
   * one sentence each naming it and how to release it; `weir run` prints them as warnings.
   * `uid` is the source operator's uid.
   */
  leftBehind?(uid: string): readonly string[];
}

/**
 * The collector a source subtask hands its reader in a job. Its own `collect` is the subtask's
 * main output: one watermark generator and idleness timer for all its records. A reader of several
 * splits asks for one output per split instead (Flink's `ReaderOutput.createOutputForSplit`): with
 * a watermark strategy each split gets its own generator and idleness timer, and the subtask's
 * watermark is the minimum over its active splits, so a fast split does not make a slow one's
 * records late and a silent split stops holding the watermark back. Create the outputs of every
 * split the reader owns before emitting its first record (a split without an output yet holds
 * nothing back), and then emit only through them.
 */
export interface ReaderOutput<T> extends Collector<T> {
  /**
   * The output of split `splitId` (the same object when asked again): emit that split's records
   * through it. The first call retires the main output, which must not have emitted a record.
   */
  createOutputForSplit(splitId: string): Collector<T>;
  /** Split `splitId` ended (or left this reader): it no longer holds the subtask's watermark back. */
  releaseOutputForSplit(splitId: string): void;
}

/** Whether `out` is a `ReaderOutput` (it is in a job; a test may poll with a plain collector). */
export function isReaderOutput<T>(out: Collector<T>): out is ReaderOutput<T> {
  return typeof (out as Partial<ReaderOutput<T>>).createOutputForSplit === 'function';
}
