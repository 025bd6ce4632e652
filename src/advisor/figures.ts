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
}

/** The checkpointing options in force, as far as the source knows them (null: unknown). */
export interface CheckpointingFigures {
  readonly intervalMs: number | null;
  readonly timeoutMs: number | null;
  readonly unaligned: boolean | null;
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
}
