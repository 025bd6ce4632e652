/**
 * Checkpoint storage: where snapshots are persisted. One instance serves one job. State files are
 * written whole by the async phase, each with a format version and a checksum; `_metadata` is
 * written last and atomically, and only then is a checkpoint complete.
 */
import type { CheckpointId, JobId } from '../core/ids.ts';
import type { CheckpointMetadata } from '../checkpoint/metadata/metadata.ts';
import type { StreamStateHandle } from './handles.ts';
import type { SavepointTarget } from './savepoint-target.ts';

/** Where a state file goes: exclusive to one checkpoint, or shared between checkpoints (incremental). */
export type StateScope = 'exclusive' | 'shared';

/** Writes the state files of one checkpoint. */
export interface CheckpointStreamFactory {
  readonly checkpointId: CheckpointId;
  /** Persists `data` (checksummed, versioned) and returns its handle. Small data may be kept inline. */
  write(scope: StateScope, nameHint: string, data: Uint8Array): Promise<StreamStateHandle>;
}

/** A completed checkpoint as found in storage. */
export interface CheckpointListing {
  readonly checkpointId: CheckpointId;
  /** Absolute path (or memory key) of the directory holding `_metadata`. */
  readonly location: string;
  readonly timestampMs: number;
  readonly sizeBytes: number;
  readonly kind: 'checkpoint' | 'savepoint';
}

/**
 * A snapshot a job may restore from, found by `restoreCandidates`. Its metadata is read only when
 * needed, so a candidate whose `_metadata` does not verify is skipped in favour of an older one.
 */
export interface RestoreCandidate {
  /** From the directory name (a checkpoint of a job directory) or from the metadata. */
  readonly checkpointId: CheckpointId;
  readonly location: string;
  /** Reads and verifies the metadata; a StorageError names the file when it does not verify. */
  load(): Promise<CheckpointMetadata>;
}

export interface CheckpointStorage {
  /** `memory` or the job's checkpoint directory; shown to people. */
  readonly description: string;
  readonly jobId: JobId;
  /**
   * Creates the job's folders and deletes checkpoint folders without `_metadata` (left by a crash
   * or an aborted checkpoint). Called at the start of every attempt, while no checkpoint runs.
   * Returns the highest checkpoint id found, complete or not, so ids never repeat.
   */
  initialize(): Promise<{ highestCheckpointId: number }>;
  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory;
  /** Reads and verifies one state stream; a mismatch is a StorageError naming the file. */
  readState(handle: StreamStateHandle): Promise<Uint8Array>;
  /** Writes `_metadata` atomically (temporary name, fsync, rename); returns the checkpoint's location. */
  commitMetadata(metadata: CheckpointMetadata): Promise<string>;
  /** Reads and verifies the metadata at a location returned by commitMetadata or listCheckpoints. */
  readMetadata(location: string): Promise<CheckpointMetadata>;
  /** Completed checkpoints of this job, ascending by id. */
  listCheckpoints(): Promise<CheckpointListing[]>;
  /**
   * What a path a person gave (`--from`) can restore from, newest first: one snapshot for a
   * checkpoint or savepoint directory or `_metadata` file; every checkpoint with `_metadata` for a
   * job directory. A path that names no snapshot is a StorageError naming it.
   */
  restoreCandidates(path: string): Promise<RestoreCandidate[]>;
  /**
   * Deletes everything exclusive to checkpoint n (its folder), complete or not. Later writes for
   * checkpoint n fail, so a late async phase of an aborted checkpoint leaves no orphan behind.
   */
  discardCheckpoint(checkpointId: CheckpointId): Promise<void>;
  /**
   * Deletes a completed checkpoint by its location: one of this job's, or one it claimed when it was
   * restored from another job's checkpoint. Refuses anything that is not a checkpoint directory.
   */
  discardCheckpointAt(location: string): Promise<void>;
  /** Deletes one shared file (the registry decided its count reached zero). */
  discardShared(handle: StreamStateHandle): Promise<void>;
  /**
   * The job's `shared/` directory (incremental files). Storages without one never have shared
   * files deleted by the coordinator.
   */
  readonly sharedDir?: string;
  /** Paths of every file in `shared/`, to find files no retained checkpoint refers to (aborted or crashed uploads). */
  listSharedFiles?(): Promise<string[]>;
  /** Deletes the job's folder if nothing retained is left in it. */
  discardJob(): Promise<void>;
  /** Where a savepoint with this id goes under `savepointRoot` (a directory, or `memory:` for memory storage). */
  createSavepointTarget(savepointRoot: string, checkpointId: CheckpointId, rand: string): SavepointTarget;
  /**
   * The savepoint target at `location`, which `createSavepointTarget` of a storage of the same job
   * made in another thread: task managers write their subtasks' state of a savepoint into it.
   */
  savepointTargetAt(location: string): SavepointTarget;
}
