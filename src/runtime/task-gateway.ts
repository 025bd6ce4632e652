/** What a subtask reports to the job master and its checkpoint coordinator. */
import type { CheckpointId } from '../core/ids.ts';
import type { CheckpointFailureReason } from '../checkpoint/failure-reason.ts';
import type { ChannelStateHandle } from '../checkpoint/metadata/metadata.ts';
import type { KeyedStateHandle, OperatorStateHandle } from '../storage/handles.ts';

/** One subtask of the job graph: its vertex (chained operator group) and its index. */
export interface TaskId {
  /** The vertex's index in the job graph. */
  readonly vertex: number;
  /** The subtask's index within the vertex. */
  readonly subtask: number;
}

export interface OperatorSubtaskState {
  readonly uid: string;
  readonly keyed: readonly KeyedStateHandle[];
  readonly operator: OperatorStateHandle | null;
  readonly channels: readonly ChannelStateHandle[];
}

/** Per-subtask figures of one checkpoint. */
export interface SubtaskCheckpointMetrics {
  /** Milliseconds of the sync phase (the pause that captured a consistent view of state). */
  readonly syncMs: number;
  /** Milliseconds of the async phase (writing the snapshot, off the record path). */
  readonly asyncMs: number;
  /** Milliseconds from the first barrier to the last on this subtask's inputs. */
  readonly alignmentMs: number;
  /** Records processed on channels that were not yet aligned, between the first and last barrier. */
  readonly alignmentRecords: number;
  /** Bytes of state this subtask persisted for the checkpoint. */
  readonly persistedBytes: number;
  /** Size of this subtask's full state (equals persistedBytes for full snapshots). */
  readonly stateBytes: number;
  /** Bytes of in-flight data persisted (unaligned checkpoints). */
  readonly channelStateBytes: number;
  /** Whether this subtask took the checkpoint unaligned. */
  readonly unaligned: boolean;
}

export interface CheckpointAck {
  readonly task: TaskId;
  readonly checkpointId: CheckpointId;
  readonly operators: readonly OperatorSubtaskState[];
  readonly metrics: SubtaskCheckpointMetrics;
}

export interface TaskGateway {
  acknowledgeCheckpoint(ack: CheckpointAck): void;
  declineCheckpoint(task: TaskId, checkpointId: CheckpointId, reason: CheckpointFailureReason, cause?: unknown): void;
  /** Every input ended and the end was handed downstream. */
  reachedEndOfData(task: TaskId): void;
  taskFinished(task: TaskId): void;
  taskFailed(task: TaskId, error: unknown): void;
}
