/**
 * The state backend interface. A backend holds working state for one operator subtask; a snapshot
 * is split into a sync part (done when `snapshot` returns, while the task is paused) and an async
 * part (`SnapshotRunner.run`, off the record path) that writes files and yields state handles.
 */
import type { ChangelogFigures } from './changelog/figures.ts';
import type { SharedLogUploader } from './changelog/shared-log-uploader.ts';
import type { CheckpointId, KeyGroup } from '../core/ids.ts';
import type { Clock, Scheduler } from '../core/time.ts';
import type { CheckpointStorage, CheckpointStreamFactory } from '../storage/storage.ts';
import type { OperatorStateHandle, StreamStateHandle } from '../storage/handles.ts';
import type { KeyedStateHandle } from './handles/registry.ts';
import type { Key, KeyGroupRange } from './key-groups.ts';
import type { StateDescriptor } from './descriptors.ts';
import type { ListStateDescriptor } from './descriptors.ts';
import type { AggregatingState, ListState, MapState, ReducingState, ValueState } from './state.ts';

/** The async part of a snapshot. `run` may be called once. */
export interface SnapshotRunner<H> {
  /**
   * The async part. A runner with much to read and encode awaits `pause()` between bounded steps,
   * so the task's mailbox (records, timers) runs in between; without `pause` it runs on without
   * yielding.
   */
  run(pause?: Pause): Promise<H>;
  /** Figures about the snapshot known after the sync part. */
  readonly syncInfo: { readonly stateBytesEstimate: number };
}

/** Resolves after the task had a turn (the scheduler's `execute`): the async part's yield point. */
export type Pause = () => Promise<void>;

/** What kind of snapshot a backend takes (absent: a checkpoint). */
export interface SnapshotOptions {
  /** A savepoint must not reuse files of earlier checkpoints: incremental backends write it in full. */
  readonly kind: 'checkpoint' | 'savepoint';
}

export interface RestoreOptions {
  /**
   * The restored files are not this job's (no-claim restore, or a savepoint): the first checkpoint
   * must be full and reuse none of them. Without it, an incremental backend restored at the same
   * parallelism extends the restored chain.
   */
  readonly firstCheckpointFull?: boolean;
}

/** Reads persisted state streams back (verifying checksums). */
export type StateReader = (handle: StreamStateHandle) => Promise<Uint8Array>;

/** Observes every keyed state change; the seam for the changelog backend. */
export interface StateChangeListener {
  onChange(stateName: string, keyGroup: KeyGroup, key: Key, op: 'set' | 'clear' | 'append' | 'mapPut' | 'mapRemove', value: unknown, mapKey?: unknown): void;
}

export type KeyedState =
  | ValueState<unknown>
  | ListState<unknown>
  | MapState<string | number, unknown>
  | ReducingState<unknown>
  | AggregatingState<unknown, unknown>;

export interface KeyedStateBackend {
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  /** Sets the key that state accessors act on; `keyGroup` is the key's group (computed upstream). */
  setCurrentKey(key: Key, keyGroup: KeyGroup): void;
  getCurrentKey(): Key;
  /** The key group given with the current key (timers file themselves under it without hashing the key again). */
  getCurrentKeyGroup(): KeyGroup;
  /** Returns the state object for the descriptor, bound to the current key. Same object on each call. */
  getState<S>(descriptor: StateDescriptor): S;
  /** Sync part now; the runner writes the files. A savepoint is always a full, self-contained snapshot. */
  snapshot(checkpointId: CheckpointId, streams: CheckpointStreamFactory, options?: SnapshotOptions): SnapshotRunner<KeyedStateHandle[]>;
  /** Loads state for this backend's key-group range from handles (full or incremental) of any parallelism. */
  restore(handles: readonly KeyedStateHandle[], read: StateReader, options?: RestoreOptions): Promise<void>;
  notifyCheckpointComplete(checkpointId: CheckpointId): void;
  notifyCheckpointAborted(checkpointId: CheckpointId): void;
  /** Number of keys with a value, per state name (for inspection and tests). */
  keyCounts(): Record<string, number>;
  /** Every (key, value) of a state, for tests and inspection; not for the record path. */
  entries(stateName: string): Array<[Key, unknown]>;
  setChangeListener(listener: StateChangeListener | null): void;
  /**
   * Backpressure from the backend itself (the changelog backend's bytes in flight): while `holding()`
   * the task takes no input; `wake` is called once when it stops holding. Absent: never holds.
   */
  readonly inputHold?: InputHold;
  /** The changelog backend's figures of its log and materializations (REST, `/metrics`); absent for the others. */
  changelogFigures?(): ChangelogFigures;
  dispose(): void;
}

/** See `KeyedStateBackend.inputHold`. */
export interface InputHold {
  holding(): boolean;
  onRelease(wake: () => void): void;
}

/** Operator (non-keyed) list state, for sources and sinks. */
export interface OperatorStateStore {
  /** Split redistribution: on rescale the entries of all subtasks are dealt out evenly. */
  getListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
  /** Union redistribution: on rescale every subtask gets all entries of all subtasks. */
  getUnionListState<T>(descriptor: ListStateDescriptor<T>): ListState<T>;
}

export interface OperatorStateBackend extends OperatorStateStore {
  snapshot(checkpointId: CheckpointId, streams: CheckpointStreamFactory): SnapshotRunner<OperatorStateHandle | null>;
  /** `handles` are this subtask's share, already redistributed (see `redistributeOperatorState`). */
  restore(handles: readonly OperatorStateHandle[], read: StateReader): Promise<void>;
  /**
   * Restores this subtask's share of the state of every old subtask (index = old subtask): split
   * state dealt out evenly over `parallelism` subtasks, union state whole to each.
   */
  restoreRedistributed(oldHandles: ReadonlyArray<OperatorStateHandle | null>, read: StateReader, subtask: number, parallelism: number): Promise<void>;
  dispose(): void;
}

/** What a task hands a backend that writes outside snapshots (the changelog backend): its storage and time. */
export interface BackendServices {
  readonly storage: CheckpointStorage;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** The deployment's run id (unique across processes and attempts), for names that must never repeat. */
  readonly runId?: string;
  /** The process's changelog uploads, shared by its subtasks' changelog backends (absent: each uploads its own files). */
  readonly changelogShare?: SharedLogUploader;
}

/** What a keyed backend is created for. */
export interface KeyedBackendArgs {
  readonly uid: string;
  readonly subtask: number;
  readonly keyGroupRange: KeyGroupRange;
  readonly maxParallelism: number;
  /** Given by the task; backends that write only in snapshots ignore it. */
  readonly services?: BackendServices;
}

/** Creates backends for operator subtasks; chosen by the `stateBackend` option. */
export interface StateBackendFactory {
  readonly name: string;
  createKeyedBackend(args: KeyedBackendArgs): KeyedStateBackend;
  createOperatorBackend(args: { uid: string; subtask: number }): OperatorStateBackend;
}
