/**
 * Keeps the retained completed checkpoints and savepoints (the recovery points), newest last.
 * Adding one returns those it pushes out of the window (a pure decision); the coordinator deletes
 * the files of checkpoints among them, never of savepoints.
 */
import { assert } from '../../core/assert.ts';
import type { CompletedCheckpoint } from './completed-checkpoint.ts';

export class CompletedCheckpointStore {
  private readonly checkpoints: CompletedCheckpoint[] = [];

  constructor(readonly maxRetained: number) {
    assert(maxRetained >= 1, 'retain at least one checkpoint');
  }

  /** Adds a completed checkpoint; returns those that fall out of the retained window. */
  add(checkpoint: CompletedCheckpoint): CompletedCheckpoint[] {
    const last = this.latest();
    assert(!last || last.checkpointId < checkpoint.checkpointId, () => `checkpoint ${checkpoint.checkpointId} is not newer than ${last!.checkpointId}`);
    this.checkpoints.push(checkpoint);
    const excess = this.checkpoints.length - this.maxRetained;
    return excess > 0 ? this.checkpoints.splice(0, excess) : [];
  }

  latest(): CompletedCheckpoint | undefined {
    return this.checkpoints[this.checkpoints.length - 1];
  }

  /** Newest first. */
  all(): readonly CompletedCheckpoint[] {
    return [...this.checkpoints].reverse();
  }

  /** Drops a checkpoint that failed to restore (its files are corrupt); returns whether it was here. */
  remove(checkpointId: number): boolean {
    const i = this.checkpoints.findIndex((c) => c.checkpointId === checkpointId);
    if (i < 0) return false;
    this.checkpoints.splice(i, 1);
    return true;
  }

  /** Empties the store; returns everything it held (to be discarded unless retained). */
  shutdown(): CompletedCheckpoint[] {
    return this.checkpoints.splice(0);
  }
}
