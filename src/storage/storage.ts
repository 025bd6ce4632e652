/**
 * Checkpoint storage: where snapshots are persisted. It moves bytes and knows the layout (DESIGN.md
 * "Storage layout"); what the bytes of `_metadata` mean is `checkpoint/metadata`'s business. One
 * instance serves one job. State files are written whole by the async phase, each with a format
 * version and a checksum; `_metadata` is written last and atomically, and only then is a
 * checkpoint complete.
 */
import type { RestoredFrom } from './restored-from.ts';
import type { CheckpointId, JobId } from '../core/ids.ts';
import type { StreamStateHandle } from './handles.ts';
import type { SavepointTarget } from './savepoint-target.ts';

/** Where a state file goes: exclusive to one checkpoint, or shared between checkpoints (incremental). */
export type StateScope = 'exclusive' | 'shared';

/** Writes the state files of one checkpoint. */
export interface CheckpointStreamFactory {
  readonly checkpointId: CheckpointId;
  /** Persists `data` (checksummed, versioned) and returns its handle. Small data may be kept inline. */
  write(scope: StateScope, nameHint: string, data: Uint8Array): Promise<StreamStateHandle>;
  /**
   * Persists `parts` joined, exactly as `write` would persist the joined bytes (same file, same
   * handle), without joining them and without long synchronous stretches: a large stream (a full
   * keyed snapshot, hundreds of MB) written while records flow on the same thread. Optional: a
   * storage without it is given the joined bytes (see `writeStreamParts`).
   */
  writeParts?(scope: StateScope, nameHint: string, parts: readonly Uint8Array[]): Promise<StreamStateHandle>;
}

/** Persists `parts` through `streams.writeParts`, or joined through `write` where it has none. */
export function writeStreamParts(
  streams: CheckpointStreamFactory,
  scope: StateScope,
  nameHint: string,
  parts: readonly Uint8Array[],
): Promise<StreamStateHandle> {
  if (streams.writeParts !== undefined) return streams.writeParts(scope, nameHint, parts);
  return streams.write(scope, nameHint, joinParts(parts));
}

/** The parts copied into one array. */
export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** A `chk-<n>` directory as found in storage: its name and whether `_metadata` is in it; nothing decoded. */
export interface CheckpointDirEntry {
  /** From the directory's name. */
  readonly checkpointId: CheckpointId;
  /** Absolute path (or memory key) of the directory. */
  readonly location: string;
  readonly hasMetadata: boolean;
}

/** What is at a path a person gave, as far as names and entry kinds tell; nothing is decoded. */
export interface SnapshotPathProbe {
  /** The path made absolute (a `memory:` key stays as it is). */
  readonly path: string;
  readonly kind: 'file' | 'dir' | 'missing';
  /** For a directory: whether `_metadata` is in it. */
  readonly hasMetadata: boolean;
  /** For a directory without `_metadata`: its `chk-<n>` subdirectories, ascending by id. */
  readonly checkpointDirs: readonly CheckpointDirEntry[];
}

/** Reading snapshots wherever a path points (this job's, another job's, a savepoint), as bytes. */
export interface SnapshotReader {
  /** Looks at `path` (see SnapshotPathProbe); an I/O failure is a StorageError naming it. */
  probe(path: string): Promise<SnapshotPathProbe>;
  /** The bytes of `<location>/_metadata`; a missing file is MISSING_FILE naming it. */
  readMetadataBytes(location: string): Promise<Uint8Array>;
  /** Bytes of the files inside the snapshot directory `location` (its own state files and `_metadata`). */
  dirSizeBytes(location: string): Promise<number>;
  /**
   * Checks, without reading its body, that a state file is there, complete and the one `handle`
   * recorded (envelope header, size, checksum field); for a range of a file, that the file is
   * there and complete and holds the range. A StorageError names it otherwise.
   */
  checkStateFile(handle: StreamStateHandle & { type: 'file' | 'range' }): Promise<void>;
  /** Which snapshot the run of job directory `jobDir` was restored from; null when it records none. A corrupt record is a StorageError naming it. */
  readRestoredFrom(jobDir: string): Promise<RestoredFrom | null>;
}

export interface CheckpointStorage extends SnapshotReader {
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
  /** The directory (or memory key) checkpoint n's `_metadata` goes into: file paths in it are relative to this. */
  checkpointLocation(checkpointId: CheckpointId): string;
  /**
   * Writes `bytes` as checkpoint n's `_metadata` atomically (temporary name, fsync, rename, fsync
   * of the directories); returns `checkpointLocation(n)`. Refuses a checkpoint that was discarded.
   */
  commitMetadata(checkpointId: CheckpointId, bytes: Uint8Array): Promise<string>;
  /**
   * Records, durably, that this job was restored from `r` (its lineage, which `--from <job dir>`
   * follows when the job's own checkpoints do not verify). Storage that dies with the process keeps none.
   */
  recordRestoredFrom(r: RestoredFrom): Promise<void>;
  /** This job's `chk-<n>` directories, complete or not, ascending by id. */
  listCheckpointDirs(): Promise<CheckpointDirEntry[]>;
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
  /**
   * Checks, before a job starts, that the storage can be reached (a bucket that exists, an endpoint
   * that answers): one error naming the location, instead of failed attempts. Storages on a local
   * file system or in memory have none (`api/preflight.ts` checks directories).
   */
  preflight?(): Promise<void>;
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
