/** The one list of reasons a checkpoint fails or is not triggered: a closed union of codes, each with a message. */
export const CHECKPOINT_FAILURE_MESSAGES = {
  /** Timed out (`checkpointing.timeoutMs`). */
  EXPIRED: 'the checkpoint did not complete within the timeout',
  /** A newer barrier overtook it during alignment. */
  SUBSUMED_BY_NEWER_BARRIER: 'a newer checkpoint barrier arrived before this one was aligned',
  /** A source subtask got its trigger after it had emitted a newer checkpoint's barrier. */
  TRIGGER_OUT_OF_ORDER: 'a source subtask got the trigger after it had emitted the barrier of a newer checkpoint',
  /** An upstream subtask cancelled it. */
  CANCELLED_UPSTREAM: 'an upstream subtask cancelled the checkpoint',
  /** A subtask's snapshot threw. */
  SNAPSHOT_FAILED: 'a subtask failed while taking its snapshot',
  /** Writing state files failed. */
  UPLOAD_FAILED: 'writing the snapshot to checkpoint storage failed',
  /** It reuses a shared file already deleted (a bug in reference counting: the simulator flags it). */
  SHARED_FILE_DELETED: 'the checkpoint reuses a shared file that was already deleted',
  /** Writing `_metadata` failed. */
  METADATA_WRITE_FAILED: 'writing the checkpoint metadata failed',
  /** The HA store refused its pointer: another job master leads (this one is deposed and commits nothing). */
  LEADERSHIP_LOST: 'this job master is no longer the leader (the HA store refused the checkpoint)',
  /** The job failed over while it was in progress. */
  JOB_FAILOVER: 'the job is restarting after a failure',
  /** The job ended while it was in progress. */
  COORDINATOR_SHUTDOWN: 'the job is shutting down',
} as const;

/** Why a checkpoint failed, as a code (`CHECKPOINT_FAILURE_MESSAGES` holds each one's message). */
export type CheckpointFailureReason = keyof typeof CHECKPOINT_FAILURE_MESSAGES;

/** Reasons that count against tolerableFailures (failures of checkpointing itself, not of the job). */
export function countsAsCheckpointFailure(reason: CheckpointFailureReason): boolean {
  return (
    reason !== 'JOB_FAILOVER' &&
    reason !== 'COORDINATOR_SHUTDOWN' &&
    reason !== 'SUBSUMED_BY_NEWER_BARRIER' &&
    reason !== 'TRIGGER_OUT_OF_ORDER' &&
    reason !== 'LEADERSHIP_LOST'
  );
}
