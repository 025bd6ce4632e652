/**
 * The figures the checkpoint advisor reads: one record per measured checkpoint plus the job's
 * checkpointing options and load. Every source (retained snapshots on disk, a running job's REST
 * history) is reduced to this shape, so the rules in `rules.ts` stay pure.
 */

/** One checkpoint as measured. */
export interface CheckpointFigure {
  readonly checkpointId: number;
  readonly status: 'completed' | 'failed' | 'timed-out';
  /** Wall-clock ms when it was triggered; null when unknown. */
  readonly timestampMs: number | null;
  /** Trigger to completion (or abort) in ms; null when the source does not record it. */
  readonly durationMs: number | null;
  /** Size of the full state it restores to. */
  readonly stateBytes: number | null;
  /** In-flight bytes an unaligned checkpoint persisted. */
  readonly inflightBytes: number | null;
  readonly type: 'aligned' | 'unaligned' | 'at-least-once' | null;
  /** The longest sync phase of its subtasks, ms (it blocks the subtask's records); null when unknown. */
  readonly syncMs: number | null;
  /** The longest async phase of its subtasks, ms (the upload, off the record path); null when unknown. */
  readonly asyncMs: number | null;
  /** The longest alignment of its subtasks, first barrier to last, ms; null when unknown. */
  readonly alignmentMs: number | null;
}

/** The checkpointing options in force, as far as the source knows them (null: unknown). */
export interface CheckpointingFigures {
  readonly intervalMs: number | null;
  readonly timeoutMs: number | null;
  readonly unaligned: boolean | null;
  /** `alignedCheckpointTimeoutMs` (0: always unaligned). */
  readonly alignedTimeoutMs: number | null;
  readonly incremental: boolean | null;
}

/** Everything the rules look at for one job. */
export interface JobFigures {
  /** What the figures were read from: a directory or a job id. */
  readonly source: string;
  readonly checkpointing: CheckpointingFigures;
  readonly checkpoints: readonly CheckpointFigure[];
  /** Share of time (0..1) the most backpressured vertex was backpressured; null when unknown. */
  readonly backpressureRatio: number | null;
  /** Restarts of the job so far; null when unknown. */
  readonly restarts: number | null;
  /** Restore time of the last recovery (deploy and restore until running), ms; null when none or unknown. */
  readonly lastRestoreMs: number | null;
}

/** The phase figures of a checkpoint no source recorded. */
export const NO_PHASES = { syncMs: null, asyncMs: null, alignmentMs: null } as const;
