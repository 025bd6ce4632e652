/** Figures of each checkpoint, kept for the CLI, tests and (later) the dashboard. */
import type { CheckpointId } from '../../core/ids.ts';
import type { SubtaskCheckpointMetrics } from '../ack.ts';
import type { TaskId } from '../../core/ids.ts';
import type { CheckpointFailureReason } from '../failure-reason.ts';

export type CheckpointStatus = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

export interface CheckpointStats {
  readonly checkpointId: CheckpointId;
  readonly kind: 'checkpoint' | 'savepoint';
  readonly isFinal: boolean;
  status: CheckpointStatus;
  /** Wall-clock ms at trigger. */
  readonly triggeredAtMs: number;
  /** From trigger to completion or failure, in the coordinator's clock. */
  durationMs: number;
  failureReason: CheckpointFailureReason | null;
  failureMessage: string | null;
  readonly subtasks: Array<{ readonly task: TaskId; readonly metrics: SubtaskCheckpointMetrics }>;
  /** Sum of bytes persisted by all subtasks for this checkpoint. */
  persistedBytes: number;
  /** Location of the completed checkpoint. */
  location: string | null;
}
