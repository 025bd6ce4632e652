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
  /** `pending` are committables restored from the checkpoint; clean up anything else left by a crash. */
  open(ctx: RuntimeContext, pending: readonly C[]): Promise<void> | void;
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
}
