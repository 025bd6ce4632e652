/**
 * The interfaces sinks implement. A plain sink writes each record. A two-phase-commit sink writes
 * into an open transaction, pre-commits it on the barrier (the committable goes into the
 * checkpoint), and commits it only after the checkpoint completed; commits are idempotent, so after
 * recovery the restored committables are committed again safely.
 */
import type { RuntimeContext } from './functions.ts';

/** Writes the records of one sink subtask of a plain sink. */
export interface SinkWriter<T> {
  /** Called once per subtask and attempt before the first record. */
  open?(ctx: RuntimeContext): void;
  /** Writes one record (at-least-once: after a recovery, records since the last checkpoint come again). */
  write(record: T): void;
  /** Called when the subtask ends. */
  close?(): void;
}

/** A plain (at-least-once) sink: `DataStream.sinkTo` creates one writer per subtask and attempt. */
export interface Sink<T> {
  /** Display name of the sink operator. */
  readonly name: string;
  /** Tells a plain sink from a two-phase-commit one. */
  readonly kind: 'plain';
  /** A new writer for one subtask and attempt. */
  createWriter(): SinkWriter<T>;
}

/** Writes the records of one sink subtask of a two-phase-commit sink, in transactions committed with checkpoints. */
export interface TwoPhaseCommitWriter<T, C> {
  /**
   * `restored` are the committables of every subtask in the checkpoint restored from (the
   * operator commits them afterwards, each by one subtask). Clean up anything else a dead run left
   * — but only what carries another run's `ctx.runId`: other subtasks of this run may already write.
   */
  open(ctx: RuntimeContext, restored: readonly C[]): Promise<void> | void;
  /** Writes one record into the open transaction. */
  write(record: T): void;
  /** Closes the open transaction durably and returns its committable, or null when it holds nothing. */
  preCommit(checkpointId: number): C | null;
  /**
   * Resolves when the transaction `preCommit(checkpointId)` closed is durable, for writers whose
   * pre-commit needs I/O (a database's PREPARE TRANSACTION). The committable itself is returned
   * synchronously by `preCommit`, because it goes into the barrier's synchronous snapshot; the
   * checkpoint is acknowledged only after this resolves, and a rejection fails the subtask (its
   * records come again from the restored checkpoint). Leave it out when `preCommit` is durable on
   * return, as the file sink's fsync is.
   */
  whenPreCommitted?(checkpointId: number): Promise<void>;
  /** Makes pre-committed transactions visible. Idempotent: may be called again for the same ones. */
  commit(committables: readonly C[]): Promise<void>;
  /** Teardown on failure: abandon the open transaction (recovery cleans it up). */
  dispose?(): void;
  /** Called when the subtask ends normally. */
  close?(): void;
}

/**
 * An exactly-once sink: output becomes visible only when the checkpoint that covers it completed.
 * `C` is the committable, the durable description of a pre-committed transaction that goes into the
 * checkpoint (it must be serialisable with msgpack).
 */
export interface TwoPhaseCommitSink<T, C> {
  /** Display name of the sink operator. */
  readonly name: string;
  /** Tells a two-phase-commit sink from a plain one. */
  readonly kind: 'two-phase-commit';
  /** A new writer for one subtask and attempt. */
  createWriter(): TwoPhaseCommitWriter<T, C>;
  /**
   * The newest checkpoint whose transactions this sink committed, read from the external system
   * (null: none). Recovery uses it never to restore, silently, to an older checkpoint than that.
   * Leave it out when the sink cannot tell: then recovery refuses to fall back past a newer
   * completed checkpoint unless duplicates are accepted.
   */
  newestCommitted?(): Promise<number | null>;
  /**
   * Takes back the visible output of every checkpoint after `checkpointId` (moving it aside, never
   * deleting it) so the job can restore that checkpoint without repeating output. Returns a
   * sentence saying what moved where. Leave it out when the sink cannot roll back.
   */
  rollBackAfter?(checkpointId: number): Promise<string>;
}
