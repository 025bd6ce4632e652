/** What a running job reports as it goes: for the CLI's progress line, logs and tests. */
import type { CheckpointStats } from '../../checkpoint/coordinator/checkpoint-stats.ts';

/** Where a job is in its life: CREATED, RUNNING (RESTARTING after a failure), then FINISHED, FAILED or CANCELED. */
export type JobStatus = 'CREATED' | 'RUNNING' | 'RESTARTING' | 'FINISHED' | 'FAILED' | 'CANCELED';

/** One event of a running job, as `RunOptions.onEvent` receives it; `type` tells which. */
export type JobEvent =
  | {
      /** All tasks of an attempt are running. */
      readonly type: 'running';
      /** The attempt: 0, then one more per restart. */
      readonly attempt: number;
      /** The checkpoint this attempt restored from, or null when it started empty. */
      readonly restoredFrom: number | null;
    }
  | {
      /** A checkpoint or savepoint completed. */
      readonly type: 'checkpoint-completed';
      /** Its figures. */
      readonly stats: CheckpointStats;
    }
  | {
      /** A checkpoint or savepoint failed (the job goes on until `tolerableFailures` is passed). */
      readonly type: 'checkpoint-failed';
      /** Its figures and failure message. */
      readonly stats: CheckpointStats;
    }
  | {
      /** A task failed and the restart strategy restarts the job. */
      readonly type: 'restarting';
      /** The attempt that is starting. */
      readonly attempt: number;
      /** Milliseconds before it starts. */
      readonly delayMs: number;
      /** The failure, on one line. */
      readonly cause: string;
      /** The error that failed the task. */
      readonly error: unknown;
    }
  | {
      /** A retained checkpoint could not be restored (it does not verify); an older one is tried. */
      readonly type: 'restore-fallback';
      /** The checkpoint skipped. */
      readonly checkpointId: number;
      /** Where it is. */
      readonly location: string;
      /** Why it was skipped. */
      readonly reason: string;
    }
  | {
      /** A sink moved aside output it had committed after the restored checkpoint. */
      readonly type: 'sink-rolled-back';
      /** The sink's operator uid. */
      readonly uid: string;
      /** The restored checkpoint: output of later checkpoints was rolled back. */
      readonly after: number;
      /** What the sink did, in its words. */
      readonly description: string;
    }
  | {
      /** A line for the log. */
      readonly type: 'log';
      /** The line. */
      readonly message: string;
    }
  | {
      /** The job finished: all input read, all output committed. */
      readonly type: 'finished';
    }
  | {
      /** The job failed for good. */
      readonly type: 'failed';
      /** Why (a JobFailedError). */
      readonly error: Error;
    }
  | {
      /** The job was cancelled. */
      readonly type: 'canceled';
    };

/** A snapshot of a running job's status and counters: `JobClient.metrics()`. */
export interface JobMetrics {
  /** The job's status now. */
  readonly status: JobStatus;
  /** The current attempt (0, then one more per restart). */
  readonly attempt: number;
  /** Records emitted by sources in this attempt. */
  readonly recordsIn: number;
  /** Records received by sinks in this attempt. */
  readonly recordsOut: number;
  /** Records emitted by sources over every attempt (a restarted source counts again what it replays). */
  readonly recordsInTotal: number;
  /** Records received by sinks over every attempt. */
  readonly recordsOutTotal: number;
  /** The latest completed checkpoint or savepoint, or null before the first. */
  readonly lastCheckpoint: CheckpointStats | null;
}

/** How a job ended when it did not fail: what `execute` resolves with. */
export interface JobResult {
  /** The job's id. */
  readonly jobId: string;
  /** FINISHED (all input read and committed) or CANCELED. */
  readonly status: 'FINISHED' | 'CANCELED';
  /** How many times the job restarted after failures. */
  readonly restarts: number;
  /** Every checkpoint and savepoint of the run, completed or failed, in order. */
  readonly checkpoints: readonly CheckpointStats[];
  /** Location of the latest retained completed checkpoint, if one is kept. */
  readonly lastCheckpointLocation: string | null;
}
