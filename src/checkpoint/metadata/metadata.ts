/**
 * The in-memory shape of a checkpoint's metadata: what every operator subtask persisted. The bytes
 * on disk are written by a versioned serializer (`serializer.ts`); this shape is what all versions
 * read into.
 */
import type { CheckpointId, JobId } from '../../core/ids.ts';
import type { KeyedStateHandle } from '../../state/handles/registry.ts';
import type { OperatorStateHandle, StreamStateHandle } from '../../storage/handles.ts';

export type SnapshotKind = 'checkpoint' | 'savepoint';

/** In-flight data persisted by an unaligned checkpoint for one channel (issue: unaligned). */
export interface ChannelStateHandle {
  /** 'input': buffers received on input channel `channel` of gate `gate`; 'output': buffers queued for output channel. */
  readonly direction: 'input' | 'output';
  readonly gate: number;
  readonly channel: number;
  readonly stream: StreamStateHandle;
  readonly buffers: number;
}

export interface SubtaskStateMeta {
  readonly subtask: number;
  readonly keyed: readonly KeyedStateHandle[];
  readonly operator: OperatorStateHandle | null;
  /** Channel state of the whole subtask, recorded on the chain's head operator only. */
  readonly channels: readonly ChannelStateHandle[];
}

export interface OperatorStateMeta {
  readonly uid: string;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly subtasks: readonly SubtaskStateMeta[];
}

/** Figures of a checkpoint as written, for listings and inspection. */
export interface CheckpointSummary {
  /** 'unaligned' when any subtask switched to (or started) unaligned. */
  readonly type: 'aligned' | 'unaligned' | 'at-least-once';
  /** Bytes this checkpoint wrote (state files, inline state and in-flight data). */
  readonly persistedBytes: number;
  /** Size of the full state it restores to (differs from persistedBytes for incremental checkpoints). */
  readonly stateBytes: number;
  /** Bytes of in-flight data persisted (unaligned). */
  readonly channelStateBytes: number;
}

export interface CheckpointMetadata {
  readonly jobId: JobId;
  readonly checkpointId: CheckpointId;
  /** Wall-clock ms when the checkpoint was triggered. */
  readonly timestampMs: number;
  readonly kind: SnapshotKind;
  readonly operators: readonly OperatorStateMeta[];
  /** Absent in metadata written without figures. */
  readonly summary?: CheckpointSummary;
  /**
   * How the in-flight data's gates and channels are numbered. 'tree' (format 3, written whenever a
   * checkpoint holds in-flight data): chains branch, and a vertex's output gates are the edges that
   * leave any of its operators, in edge order. Absent (formats 1 and 2): an operator with several
   * consumers ended its chain, so only a chain's last operator had output edges; in-flight data so
   * numbered maps onto a job whose chains branch only where nothing branches (deployment.ts,
   * `checkChannelStateFits`).
   */
  readonly chainLayout?: 'tree';
}
