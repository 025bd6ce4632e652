/** Figures of each checkpoint, kept for the CLI, tests and (later) the dashboard. */
import type { CheckpointId } from '../../core/ids.ts';
import type { SubtaskCheckpointMetrics } from '../ack.ts';
import type { TaskId } from '../../core/ids.ts';
import type { CheckpointFailureReason } from '../failure-reason.ts';

/** Where a checkpoint is: collecting acknowledgements, completed (durable), or failed. */
export type CheckpointStatus = 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** The figures of one checkpoint or savepoint: in job events, `JobMetrics` and `JobResult`. */
export interface CheckpointStats {
  /** Its number within the job. */
  readonly checkpointId: CheckpointId;
  /** A checkpoint or a savepoint. */
  readonly kind: 'checkpoint' | 'savepoint';
  /** The final checkpoint of a bounded job (or of a stop-with-savepoint), after which sinks commit and the job ends. */
  readonly isFinal: boolean;
  /** Where it is now. */
  status: CheckpointStatus;
  /** Wall-clock ms at trigger. */
  readonly triggeredAtMs: number;
  /** From trigger to completion or failure, in the coordinator's clock. */
  durationMs: number;
  /** Why it failed, as a code; null unless FAILED. */
  failureReason: CheckpointFailureReason | null;
  /** Why it failed, in words; null unless FAILED. */
  failureMessage: string | null;
  /** Each subtask's figures, as its acknowledgement arrived. */
  readonly subtasks: Array<{
    /** The subtask. */
    readonly task: TaskId;
    /** Its figures. */
    readonly metrics: SubtaskCheckpointMetrics;
  }>;
  /** Sum of bytes persisted by all subtasks for this checkpoint. */
  persistedBytes: number;
  /** Location of the completed checkpoint. */
  location: string | null;
}
