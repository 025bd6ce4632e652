/** The one list of reasons a checkpoint fails or is not triggered: a closed union of codes, each with a message. */
export const CHECKPOINT_FAILURE_MESSAGES = {
  EXPIRED: 'the checkpoint did not complete within the timeout',
  SUBSUMED_BY_NEWER_BARRIER: 'a newer checkpoint barrier arrived before this one was aligned',
  CANCELLED_UPSTREAM: 'an upstream subtask cancelled the checkpoint',
  SNAPSHOT_FAILED: 'a subtask failed while taking its snapshot',
  UPLOAD_FAILED: 'writing the snapshot to checkpoint storage failed',
  SHARED_FILE_DELETED: 'the checkpoint reuses a shared file that was already deleted',
  METADATA_WRITE_FAILED: 'writing the checkpoint metadata failed',
  JOB_FAILOVER: 'the job is restarting after a failure',
  COORDINATOR_SHUTDOWN: 'the job is shutting down',
} as const;

export type CheckpointFailureReason = keyof typeof CHECKPOINT_FAILURE_MESSAGES;

/** Reasons that count against tolerableFailures (failures of checkpointing itself, not of the job). */
export function countsAsCheckpointFailure(reason: CheckpointFailureReason): boolean {
  return reason !== 'JOB_FAILOVER' && reason !== 'COORDINATOR_SHUTDOWN' && reason !== 'SUBSUMED_BY_NEWER_BARRIER';
}

/** Why a trigger attempt did not start a checkpoint now. */
export const TRIGGER_SKIP_MESSAGES = {
  TOO_MANY_CONCURRENT: 'maxConcurrent checkpoints are already in progress',
  MIN_PAUSE: 'minPause since the last completed checkpoint has not passed',
  NOT_ALL_RUNNING: 'not all subtasks are running',
  SHUT_DOWN: 'the coordinator is shut down',
} as const;

export type TriggerSkipReason = keyof typeof TRIGGER_SKIP_MESSAGES;
