/** What a subtask reports to the job master and its checkpoint coordinator. */
import type { CheckpointId, TaskId } from '../core/ids.ts';
import type { CheckpointAck } from '../checkpoint/ack.ts';
import type { CheckpointFailureReason } from '../checkpoint/failure-reason.ts';

export interface TaskGateway {
  acknowledgeCheckpoint(ack: CheckpointAck): void;
  declineCheckpoint(task: TaskId, checkpointId: CheckpointId, reason: CheckpointFailureReason, cause?: unknown): void;
  /** Every input ended and the end was handed downstream. */
  reachedEndOfData(task: TaskId): void;
  taskFinished(task: TaskId): void;
  taskFailed(task: TaskId, error: unknown): void;
}
