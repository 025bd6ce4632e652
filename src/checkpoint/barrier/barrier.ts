/** Checkpoint barriers and the markers that abort them: the in-band events of the snapshot protocol. */
import type { CheckpointId } from '../../core/ids.ts';

export interface CheckpointOptions {
  /** 'checkpoint' or 'savepoint' (savepoints are always aligned). */
  readonly kind: 'checkpoint' | 'savepoint';
  /** Aligned exactly-once, unaligned (the barrier overtakes in-flight data), or at-least-once (no holding back). */
  readonly alignment: 'aligned' | 'at-least-once' | 'unaligned';
  /** For aligned barriers of an unaligned-capable job: switch to unaligned after this long (null: never). */
  readonly alignedTimeoutMs: number | null;
  /** The checkpoint taken after every source ended; its completion lets the job finish. */
  readonly isFinal: boolean;
  /**
   * A savepoint's own directory (or memory key), where its subtasks write their state, as Flink's
   * target location reference: subtasks in task managers of other threads cannot reach the
   * coordinator's savepoint target. Absent for checkpoints (they go to the job's checkpoint storage).
   */
  readonly targetLocation?: string;
}

export interface CheckpointBarrier {
  readonly kind: 'barrier';
  readonly checkpointId: CheckpointId;
  /** Wall-clock ms when the coordinator triggered the checkpoint. */
  readonly timestamp: number;
  readonly options: CheckpointOptions;
}

/** Tells downstream that checkpoint n was aborted upstream, so it stops waiting for its barriers. */
export interface CancelCheckpointMarker {
  readonly kind: 'cancel';
  readonly checkpointId: CheckpointId;
}
