/**
 * Checkpoint storage on a local (or mounted) file system, laid out as DESIGN.md "Storage layout".
 * State files are written whole, enveloped (version + crc32) and fsynced; `_metadata` is written
 * last and atomically; shared files are deleted only when the registry says so (Invariant 5).
 */
import { promises as fsp, rmSync } from 'node:fs';
import * as path from 'node:path';
import { assert } from '../core/assert.ts';
import { StorageError } from '../core/errors.ts';
import type { CheckpointId, JobId } from '../core/ids.ts';
import { errnoCode, fsyncDir, storageIoError, writeFileAtomic } from './atomic-write.ts';
import { anySnapshotReader } from './any-reader.ts';
import { checkpointDirsOf } from './fs-inspect.ts';
import { type RestoredFrom, writeRestoredFromFs } from './restored-from.ts';
import { listDir, makeDir, pathKind, removeDirIfEmpty, writeNewFile, writeNewStateFileParts } from './fs-io.ts';
import { FsSavepointWriter } from './fs-savepoint.ts';
import type { StreamStateHandle } from './handles.ts';
import {
  checkpointDir,
  checkpointIdOfSharedFile,
  isInside,
  isMemoryPath,
  jobDir as jobDirOf,
  joinPath,
  metadataPath,
  parseCheckpointDirName,
  restoredFromPath,
  runOwnerPath,
  savepointDir,
  sharedDir,
  taskOwnedDir,
} from './paths.ts';
import type { SavepointTarget } from './savepoint-target.ts';
import { counterSuffixes, DEFAULT_INLINE_THRESHOLD_BYTES, encodeStateFile, fileHandleFor, inlineHandleFor } from './state-file.ts';
import {
  joinParts,
  type CheckpointDirEntry,
  type CheckpointStorage,
  type CheckpointStreamFactory,
  type SnapshotPathProbe,
  type StateScope,
} from './storage.ts';

export { FsSavepointWriter } from './fs-savepoint.ts';
export { incompleteCheckpointDirs } from './fs-inspect.ts';
export { DEFAULT_INLINE_THRESHOLD_BYTES } from './state-file.ts';

export interface FsCheckpointStorageOptions {
  /** State smaller than this is kept inline in `_metadata` instead of a file of its own. */
  readonly inlineThresholdBytes?: number;
  /** Unique suffixes for file names (pass one drawn from the job's Random); default a counter. */
  readonly fileSuffix?: () => string;
}

/** Checkpoint storage of one job under `<rootDir>/<jobId>/`. */
export class FsCheckpointStorage implements CheckpointStorage {
  readonly description: string;
  readonly jobDir: string;
  /** Where shared (incremental) files go; the coordinator counts references to them (`SharedStateRegistry`). */
  readonly sharedDir: string;
  private readonly inlineThresholdBytes: number;
  private readonly nextSuffix: () => string;
  /** Checkpoints discarded in this process: writes for them are refused. */
  private readonly discarded = new Set<number>();
  /** Set when a shared file was created since the shared directory was last fsynced. */
  private sharedDirDirty = false;

  constructor(
    rootDir: string,
    readonly jobId: JobId,
    options: FsCheckpointStorageOptions = {},
  ) {
    this.jobDir = jobDirOf(path.resolve(rootDir), jobId);
    this.sharedDir = sharedDir(this.jobDir);
    this.description = this.jobDir;
    this.inlineThresholdBytes = options.inlineThresholdBytes ?? DEFAULT_INLINE_THRESHOLD_BYTES;
    assert(Number.isInteger(this.inlineThresholdBytes) && this.inlineThresholdBytes >= 0, () => `invalid inlineThresholdBytes ${options.inlineThresholdBytes}`);
    this.nextSuffix = options.fileSuffix ?? counterSuffixes();
  }

  async initialize(): Promise<{ highestCheckpointId: number }> {
    await makeDir(sharedDir(this.jobDir));
    await makeDir(taskOwnedDir(this.jobDir));
    let highestCheckpointId = 0;
    for (const entry of await listDir(this.jobDir)) {
      const id = entry.isDirectory() ? parseCheckpointDirName(entry.name) : null;
      if (id === null) continue;
      highestCheckpointId = Math.max(highestCheckpointId, id);
      const dir = joinPath(this.jobDir, entry.name);
      if ((await pathKind(metadataPath(dir))) !== 'file') rmSync(dir, { recursive: true, force: true });
    }
    // A shared file names the checkpoint that wrote it, which may have left nothing else behind.
    for (const file of await this.listSharedFiles()) highestCheckpointId = Math.max(highestCheckpointId, checkpointIdOfSharedFile(path.basename(file)) ?? 0);
    return { highestCheckpointId };
  }

  checkpointDir(checkpointId: CheckpointId): string {
    return checkpointDir(this.jobDir, checkpointId);
  }

  checkpointLocation(checkpointId: CheckpointId): string {
    return this.checkpointDir(checkpointId);
  }

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    return {
      checkpointId,
      write: (scope, nameHint, data) => this.write(checkpointId, scope, nameHint, data),
      writeParts: (scope, nameHint, parts) => this.writeParts(checkpointId, scope, nameHint, parts),
    };
  }

  private async writeParts(checkpointId: CheckpointId, scope: StateScope, nameHint: string, parts: readonly Uint8Array[]): Promise<StreamStateHandle> {
    let size = 0;
    for (const p of parts) size += p.byteLength;
    if (size < this.inlineThresholdBytes) return this.write(checkpointId, scope, nameHint, joinParts(parts));
    const dir = scope === 'exclusive' ? this.checkpointDir(checkpointId) : sharedDir(this.jobDir);
    this.checkNotDiscarded(checkpointId, dir);
    await makeDir(dir);
    this.checkNotDiscarded(checkpointId, dir);
    const written = await writeNewStateFileParts(dir, nameHint, parts, this.nextSuffix);
    if (scope === 'shared') this.sharedDirDirty = true;
    return { type: 'file', path: written.file, size: written.size, checksum: written.checksum };
  }

  private async write(checkpointId: CheckpointId, scope: StateScope, nameHint: string, data: Uint8Array): Promise<StreamStateHandle> {
    assert(data instanceof Uint8Array, () => `state for ${nameHint} is not a Uint8Array`);
    if (data.byteLength < this.inlineThresholdBytes) return inlineHandleFor(data);
    const dir = scope === 'exclusive' ? this.checkpointDir(checkpointId) : sharedDir(this.jobDir);
    this.checkNotDiscarded(checkpointId, dir);
    await makeDir(dir);
    this.checkNotDiscarded(checkpointId, dir);
    const file = await writeNewFile(dir, nameHint, encodeStateFile(data), this.nextSuffix);
    if (scope === 'shared') this.sharedDirDirty = true;
    return fileHandleFor(file, data);
  }

  /** A state file on disk, or (a job restored from a snapshot elsewhere) a state object at a storage URL. */
  readState(handle: StreamStateHandle): Promise<Uint8Array> {
    return anySnapshotReader.readState(handle);
  }

  private checkNotDiscarded(checkpointId: CheckpointId, dir: string): void {
    if (this.discarded.has(checkpointId))
      throw new StorageError('STORAGE_IO', dir, `checkpoint ${checkpointId} was aborted and discarded; not writing into it`);
  }

  async commitMetadata(checkpointId: CheckpointId, bytes: Uint8Array): Promise<string> {
    const dir = this.checkpointDir(checkpointId);
    const file = metadataPath(dir);
    this.checkNotDiscarded(checkpointId, dir);
    assert((await pathKind(file)) === 'missing', () => `checkpoint ${checkpointId} is already committed at ${file}`);
    this.checkNotDiscarded(checkpointId, dir);
    await makeDir(dir);
    if (this.sharedDirDirty) {
      this.sharedDirDirty = false;
      await fsyncDir(sharedDir(this.jobDir));
    }
    await writeFileAtomic(file, bytes, this.nextSuffix());
    // The chk-<n> entry itself must survive a crash too.
    await fsyncDir(this.jobDir);
    return dir;
  }

  // Reading snapshots: on disk, or at a storage URL (`--from s3://...` into a job on a directory).
  readMetadataBytes(location: string): Promise<Uint8Array> {
    return anySnapshotReader.readMetadataBytes(location);
  }

  probe(p: string): Promise<SnapshotPathProbe> {
    return anySnapshotReader.probe(p);
  }

  dirSizeBytes(location: string): Promise<number> {
    return anySnapshotReader.dirSizeBytes(location);
  }

  readRestoredFrom(jobDir: string): Promise<RestoredFrom | null> {
    return anySnapshotReader.readRestoredFrom(jobDir);
  }

  checkStateFile(handle: StreamStateHandle & { type: 'file' | 'range' }): Promise<void> {
    return anySnapshotReader.checkStateFile(handle);
  }

  recordRestoredFrom(r: RestoredFrom): Promise<void> {
    return writeRestoredFromFs(this.jobDir, r, this.nextSuffix());
  }

  listCheckpointDirs(): Promise<CheckpointDirEntry[]> {
    return checkpointDirsOf(this.jobDir);
  }

  async discardCheckpoint(checkpointId: CheckpointId): Promise<void> {
    const dir = this.checkpointDir(checkpointId);
    this.discarded.add(checkpointId);
    try {
      // Synchronous, so no write of this checkpoint can slip in between listing and removing.
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      throw storageIoError(dir, 'discard checkpoint', err);
    }
  }

  async discardCheckpointAt(location: string): Promise<void> {
    const id = parseCheckpointDirName(path.basename(location));
    if (id === null) throw new StorageError('STORAGE_IO', location, 'not a checkpoint directory (chk-<n>); refusing to delete it');
    if (path.resolve(path.dirname(location)) === path.resolve(this.jobDir)) this.discarded.add(id);
    rmSync(location, { recursive: true, force: true });
  }

  async discardShared(handle: StreamStateHandle): Promise<void> {
    if (handle.type === 'inline') return;
    const shared = sharedDir(this.jobDir);
    // Never delete what this job does not own, e.g. files of the savepoint it was restored from.
    assert(isInside(shared, handle.path) && handle.path !== shared, () => `discardShared: ${handle.path} is not in ${shared}`);
    try {
      await fsp.unlink(handle.path);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw storageIoError(handle.path, 'discard shared file', err);
    }
  }

  createSavepointTarget(savepointRoot: string, checkpointId: CheckpointId, rand: string): SavepointTarget {
    if (isMemoryPath(savepointRoot))
      throw new StorageError('STORAGE_IO', savepointRoot, 'a job checkpointing to a directory writes savepoints to a directory, not to memory');
    return new FsSavepointWriter(savepointDir(path.resolve(savepointRoot), checkpointId, rand));
  }

  savepointTargetAt(location: string): SavepointTarget {
    if (isMemoryPath(location))
      throw new StorageError('STORAGE_IO', location, 'a job checkpointing to a directory writes savepoints to a directory, not to memory');
    return new FsSavepointWriter(location);
  }

  async listSharedFiles(): Promise<string[]> {
    return (await listDir(this.sharedDir)).filter((e) => e.isFile()).map((e) => joinPath(this.sharedDir, e.name));
  }

  /** Removes the job directory once no chk-<n> is left; non-empty shared or task-owned dirs stay. */
  async discardJob(): Promise<void> {
    const entries = await listDir(this.jobDir);
    if (entries.some((e) => e.isDirectory() && parseCheckpointDirName(e.name) !== null)) return;
    await removeDirIfEmpty(sharedDir(this.jobDir));
    await removeDirIfEmpty(taskOwnedDir(this.jobDir));
    await fsp.rm(runOwnerPath(this.jobDir), { force: true });
    await fsp.rm(restoredFromPath(this.jobDir), { force: true });
    await removeDirIfEmpty(this.jobDir);
  }
}
