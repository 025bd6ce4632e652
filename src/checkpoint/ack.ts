/** What a subtask sends the checkpoint coordinator when its part of a checkpoint is persisted. */
import type { CheckpointId, TaskId } from '../core/ids.ts';
import type { ChannelStateHandle } from './metadata/metadata.ts';
import type { KeyedStateHandle } from '../state/handles/registry.ts';
import type { OperatorStateHandle } from '../storage/handles.ts';

export interface OperatorSubtaskState {
  readonly uid: string;
  readonly keyed: readonly KeyedStateHandle[];
  readonly operator: OperatorStateHandle | null;
  readonly channels: readonly ChannelStateHandle[];
}

/**
 * Per-subtask figures of one checkpoint. Two are wall-clock stamps of the clock the subtask ran
 * on (`barrierArrivalsMs`, `syncStartMs`): from a task manager, the job master moves them onto its
 * own clock by that task manager's estimated offset (cluster/job-master/clock-offsets.ts). The rest
 * are durations on one clock, counts or sizes.
 */
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
  /**
   * Wall-clock ms at which the barrier was taken from each input channel, in input-gate order
   * (the execution plan's `inputs`); -1 for a channel that closed or never delivered it. Empty for
   * a source subtask. Recorded once per barrier, never per record. Empty in the checkpoint history
   * of events, `JobMetrics` and `JobResult` (kept only for the few checkpoints the web server
   * shows, see docs/rest.md).
   */
  readonly barrierArrivalsMs: readonly number[];
  /**
   * Per input channel, in input-gate order: the elements queued ahead of the barrier when it
   * entered the channel's queue at this subtask (what an aligned barrier waited behind; 0 when it
   * overtook them, unaligned); -1 when not seen. Recorded once per barrier. Empty in the
   * checkpoint history, like `barrierArrivalsMs`.
   */
  readonly buffersAhead: readonly number[];
  /** Wall-clock ms at which the sync phase began (a source: the trigger reached it; else the last barrier was in). */
  readonly syncStartMs: number;
}

export interface CheckpointAck {
  readonly task: TaskId;
  readonly checkpointId: CheckpointId;
  readonly operators: readonly OperatorSubtaskState[];
  readonly metrics: SubtaskCheckpointMetrics;
}
