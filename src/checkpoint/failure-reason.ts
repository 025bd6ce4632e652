/** The one list of reasons a checkpoint fails or is not triggered: a closed union of codes, each with a message. */
export const CHECKPOINT_FAILURE_MESSAGES = {
  EXPIRED: 'the checkpoint did not complete within the timeout',
  SUBSUMED_BY_NEWER_BARRIER: 'a newer checkpoint barrier arrived before this one was aligned',
  CANCELLED_UPSTREAM: 'an upstream subtask cancelled the checkpoint',
  SNAPSHOT_FAILED: 'a subtask failed while taking its snapshot',
  UPLOAD_FAILED: 'writing the snapshot to checkpoint storage failed',
  METADATA_WRITE_FAILED: 'writing the checkpoint metadata failed',
  JOB_FAILOVER: 'the job is restarting after a failure',
  COORDINATOR_SHUTDOWN: 'the job is shutting down',
} as const;

export type CheckpointFailureReason = keyof typeof CHECKPOINT_FAILURE_MESSAGES;

/** Reasons that count against tolerableFailures (failures of checkpointing itself, not of the job). */
export function countsAsCheckpointFailure(reason: CheckpointFailureReason): boolean {
  return reason !== 'JOB_FAILOVER' && reason !== 'COORDINATOR_SHUTDOWN' && reason !== 'SUBSUMED_BY_NEWER_BARRIER';
}
