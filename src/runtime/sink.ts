/**
 * The interfaces sinks implement. A plain sink writes each record. A two-phase-commit sink writes
 * into an open transaction, pre-commits it on the barrier (the committable goes into the
 * checkpoint), and commits it only after the checkpoint completed; commits are idempotent, so after
 * recovery the restored committables are committed again safely.
 */
import type { RuntimeContext } from './functions.ts';

export interface SinkWriter<T> {
  open?(ctx: RuntimeContext): void;
  write(record: T): void;
  close?(): void;
}

export interface Sink<T> {
  readonly name: string;
  readonly kind: 'plain';
  createWriter(): SinkWriter<T>;
}

export interface TwoPhaseCommitWriter<T, C> {
  /**
   * `restored` are the committables of every subtask in the checkpoint restored from (the
   * operator commits them afterwards, each by one subtask). Clean up anything else a dead run left
   * — but only what carries another run's `ctx.runId`: other subtasks of this run may already write.
   */
  open(ctx: RuntimeContext, restored: readonly C[]): Promise<void> | void;
  write(record: T): void;
  /** Closes the open transaction durably and returns its committable, or null when it holds nothing. */
  preCommit(checkpointId: number): C | null;
  /** Makes pre-committed transactions visible. Idempotent: may be called again for the same ones. */
  commit(committables: readonly C[]): Promise<void>;
  /** Teardown on failure: abandon the open transaction (recovery cleans it up). */
  dispose?(): void;
  close?(): void;
}

export interface TwoPhaseCommitSink<T, C> {
  readonly name: string;
  readonly kind: 'two-phase-commit';
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
