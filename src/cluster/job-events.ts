/** What a running job reports as it goes: for the CLI's progress line, logs and tests. */
import type { CheckpointStats } from '../checkpoint/coordinator/checkpoint-stats.ts';

export type JobStatus = 'CREATED' | 'RUNNING' | 'RESTARTING' | 'FINISHED' | 'FAILED' | 'CANCELED';

export type JobEvent =
  | { readonly type: 'running'; readonly attempt: number; readonly restoredFrom: number | null }
  | { readonly type: 'checkpoint-completed'; readonly stats: CheckpointStats }
  | { readonly type: 'checkpoint-failed'; readonly stats: CheckpointStats }
  | { readonly type: 'restarting'; readonly attempt: number; readonly delayMs: number; readonly cause: string; readonly error: unknown }
  | { readonly type: 'restore-fallback'; readonly checkpointId: number; readonly location: string; readonly reason: string }
  | { readonly type: 'sink-rolled-back'; readonly uid: string; readonly after: number; readonly description: string }
  | { readonly type: 'log'; readonly message: string }
  | { readonly type: 'finished' }
  | { readonly type: 'failed'; readonly error: Error }
  | { readonly type: 'canceled' };

export interface JobMetrics {
  readonly status: JobStatus;
  readonly attempt: number;
  /** Records emitted by sources in this attempt. */
  readonly recordsIn: number;
  /** Records received by sinks in this attempt. */
  readonly recordsOut: number;
  readonly lastCheckpoint: CheckpointStats | null;
}

export interface JobResult {
  readonly jobId: string;
  readonly status: 'FINISHED' | 'CANCELED';
  readonly restarts: number;
  readonly checkpoints: readonly CheckpointStats[];
  /** Location of the latest retained completed checkpoint, if one is kept. */
  readonly lastCheckpointLocation: string | null;
}
