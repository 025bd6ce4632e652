/**
 * Checkpoint storage in an S3-compatible bucket, laid out as on a file system (DESIGN.md "Storage
 * layout") below `s3://bucket/prefix/<job-id>/`, with the commit protocol of a store without
 * rename: state objects first, `_metadata` last and create-only (`commit.ts`), fenced by the run
 * marker (`run-marker.ts`); a checkpoint without `_metadata` is never listed as complete, and is
 * deleted by listing when the next attempt starts. Paths that are not S3 URLs (a restore from a
 * directory) are read from the file system.
 */
import { assert } from '../../core/assert.ts';
import { StorageError } from '../../core/errors.ts';
import type { CheckpointId, JobId } from '../../core/ids.ts';
import { FsSavepointWriter } from '../fs-savepoint.ts';
import { anySnapshotReader } from '../any-reader.ts';
import type { StreamStateHandle } from '../handles.ts';
import {
  baseName,
  checkpointDir,
  checkpointIdOfSharedFile,
  isInside,
  jobDir as jobDirOf,
  metadataPath,
  parentDir,
  parseCheckpointDirName,
  restoredFromPath,
  runOwnerPath,
  savepointDir,
  sharedDir,
} from '../paths.ts';
import { encodeRestoredFrom, type RestoredFrom } from '../restored-from.ts';
import type { SavepointTarget } from '../savepoint-target.ts';
import { DEFAULT_INLINE_THRESHOLD_BYTES, inlineHandleFor } from '../state-file.ts';
import {
  joinParts,
  type CheckpointDirEntry,
  type CheckpointStorage,
  type CheckpointStreamFactory,
  type SnapshotPathProbe,
  type StateScope,
} from '../storage.ts';
import { commitCreateOnly, deleteSnapshotObjects } from './commit.ts';
import { type EntropyRoot, entropyRootOf, injectedRoot, isInjectedUnder, stableRoot } from './entropy.ts';
import { S3Objects } from './objects.ts';
import { checkpointDirsS3, readStateS3, s3SnapshotReader } from './reader.ts';
import { checkRunClaim, claimRun } from './run-marker.ts';
import { S3SavepointWriter } from './s3-savepoint.ts';
import { writeStateObject } from './state-objects.ts';
import { s3Settings, type S3Settings } from './settings.ts';
import { isS3Path, parseS3Url } from './url.ts';

export interface S3CheckpointStorageOptions extends Partial<S3Settings> {
  /** State smaller than this is kept inline in `_metadata` instead of an object of its own. */
  readonly inlineThresholdBytes?: number;
}

/** Checkpoint storage of one job below `<root>/<jobId>/` in a bucket. */
export class S3CheckpointStorage implements CheckpointStorage {
  readonly description: string;
  /** The job's stable prefix: `_metadata`, records and shared objects (never with entropy). */
  readonly jobDir: string;
  readonly sharedDir: string;
  readonly objects: S3Objects;
  private readonly entropy: EntropyRoot | null;
  private readonly inlineThresholdBytes: number;
  private readonly reader;
  /** Checkpoints discarded by this instance: writes for them are refused, and one that raced the discard is deleted. */
  private readonly discarded = new Set<number>();
  /** Checkpoints this instance committed (a second commit is a programmer error). */
  private readonly committed = new Set<number>();
  /** The run marker's token once `initialize` claimed the job; commits check it is still ours. */
  private runToken: string | null = null;

  constructor(
    readonly root: string,
    readonly jobId: JobId,
    options: S3CheckpointStorageOptions = {},
  ) {
    parseS3Url(root);
    this.entropy = entropyRootOf(root);
    this.jobDir = jobDirOf(stableRoot(root), jobId);
    this.sharedDir = sharedDir(this.jobDir);
    this.description = this.jobDir;
    this.inlineThresholdBytes = options.inlineThresholdBytes ?? DEFAULT_INLINE_THRESHOLD_BYTES;
    assert(Number.isInteger(this.inlineThresholdBytes) && this.inlineThresholdBytes >= 0, () => `invalid inlineThresholdBytes ${options.inlineThresholdBytes}`);
    this.objects = new S3Objects(s3Settings(options));
    this.reader = s3SnapshotReader(this.objects);
  }

  /** Before a job starts: the bucket exists and answers (STORAGE_UNREACHABLE naming the URL otherwise). */
  preflight(): Promise<void> {
    return this.objects.checkBucket(this.jobDir);
  }

  /**
   * Claims the job for this run (run marker), deletes what incomplete checkpoints left (objects of a
   * `chk-<n>` without `_metadata`, also below entropy prefixes), and returns the highest id seen.
   */
  async initialize(): Promise<{ highestCheckpointId: number }> {
    this.runToken = await claimRun(this.objects, this.jobDir);
    let highestCheckpointId = 0;
    for (const c of await checkpointDirsS3(this.objects, this.jobDir)) {
      highestCheckpointId = Math.max(highestCheckpointId, c.checkpointId);
      if (!c.hasMetadata) await this.deleteCheckpointObjects(c.checkpointId);
    }
    highestCheckpointId = Math.max(highestCheckpointId, await this.cleanInjectedOrphans());
    for (const file of await this.listSharedFiles()) highestCheckpointId = Math.max(highestCheckpointId, checkpointIdOfSharedFile(baseName(file)) ?? 0);
    return { highestCheckpointId };
  }

  /** With entropy: deletes injected objects of this job's checkpoints that have no `_metadata`; returns the highest id among them. */
  private async cleanInjectedOrphans(): Promise<number> {
    if (this.entropy === null) return 0;
    const e = this.entropy;
    let highest = 0;
    const orphans: string[] = [];
    const complete = new Map<number, boolean>();
    for (const o of (await this.objects.list(e.before)).objects) {
      if (!isInjectedUnder(e, o.url, this.jobId)) continue;
      const id = parseCheckpointDirName(baseName(parentDir(o.url)));
      if (id === null) continue;
      highest = Math.max(highest, id);
      if (!complete.has(id)) complete.set(id, (await this.objects.head(metadataPath(this.checkpointDir(id)))) !== null);
      if (complete.get(id) !== true) orphans.push(o.url);
    }
    await this.objects.deleteAll(orphans);
    return highest;
  }

  checkpointDir(checkpointId: CheckpointId): string {
    return checkpointDir(this.jobDir, checkpointId);
  }

  checkpointLocation(checkpointId: CheckpointId): string {
    return this.checkpointDir(checkpointId);
  }

  /** Where a new exclusive object of checkpoint n goes: its stable prefix, or an injected one. */
  private exclusiveDir(checkpointId: CheckpointId): string {
    if (this.entropy === null) return this.checkpointDir(checkpointId);
    return checkpointDir(jobDirOf(injectedRoot(this.entropy), this.jobId), checkpointId);
  }

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    return {
      checkpointId,
      write: (scope, nameHint, data) => {
        assert(data instanceof Uint8Array, () => `state for ${nameHint} is not a Uint8Array`);
        return this.writeParts(checkpointId, scope, nameHint, [data]);
      },
      writeParts: (scope, nameHint, parts) => this.writeParts(checkpointId, scope, nameHint, parts),
    };
  }

  private async writeParts(checkpointId: CheckpointId, scope: StateScope, nameHint: string, parts: readonly Uint8Array[]): Promise<StreamStateHandle> {
    let size = 0;
    for (const p of parts) size += p.byteLength;
    if (size < this.inlineThresholdBytes) return inlineHandleFor(joinParts(parts));
    const dir = scope === 'exclusive' ? this.exclusiveDir(checkpointId) : this.sharedDir;
    this.checkNotDiscarded(checkpointId, dir);
    const handle = await writeStateObject(this.objects, dir, nameHint, parts);
    if (this.discarded.has(checkpointId)) {
      // Discarded while it uploaded: remove it, so the aborted checkpoint leaves no orphan.
      await this.objects.deleteAll([handle.path]).catch(() => undefined);
      this.checkNotDiscarded(checkpointId, dir);
    }
    return handle;
  }

  private checkNotDiscarded(checkpointId: CheckpointId, dir: string): void {
    if (this.discarded.has(checkpointId))
      throw new StorageError('STORAGE_IO', dir, `checkpoint ${checkpointId} was aborted and discarded; not writing into it`);
  }

  readState(handle: StreamStateHandle): Promise<Uint8Array> {
    if (handle.type !== 'inline' && !isS3Path(handle.path)) return anySnapshotReader.readState(handle);
    return readStateS3(this.objects, handle);
  }

  async commitMetadata(checkpointId: CheckpointId, bytes: Uint8Array): Promise<string> {
    const dir = this.checkpointDir(checkpointId);
    this.checkNotDiscarded(checkpointId, dir);
    assert(!this.committed.has(checkpointId), () => `checkpoint ${checkpointId} is already committed at ${metadataPath(dir)}`);
    if (this.runToken !== null) await checkRunClaim(this.objects, this.jobDir, this.runToken);
    this.checkNotDiscarded(checkpointId, dir);
    await commitCreateOnly(this.objects, metadataPath(dir), bytes, `checkpoint ${checkpointId}`);
    this.committed.add(checkpointId);
    return dir;
  }

  readMetadataBytes(location: string): Promise<Uint8Array> {
    return isS3Path(location) ? this.reader.readMetadataBytes(location) : anySnapshotReader.readMetadataBytes(location);
  }

  probe(p: string): Promise<SnapshotPathProbe> {
    return isS3Path(p) ? this.reader.probe(p) : anySnapshotReader.probe(p);
  }

  dirSizeBytes(location: string): Promise<number> {
    return isS3Path(location) ? this.reader.dirSizeBytes(location) : anySnapshotReader.dirSizeBytes(location);
  }

  checkStateFile(handle: StreamStateHandle & { type: 'file' | 'range' }): Promise<void> {
    return isS3Path(handle.path) ? this.reader.checkStateFile(handle) : anySnapshotReader.checkStateFile(handle);
  }

  readRestoredFrom(jobDir: string): Promise<RestoredFrom | null> {
    return isS3Path(jobDir) ? this.reader.readRestoredFrom(jobDir) : anySnapshotReader.readRestoredFrom(jobDir);
  }

  async recordRestoredFrom(r: RestoredFrom): Promise<void> {
    const bytes = encodeRestoredFrom(r);
    // One PUT replaces the object whole: readers see the old record or the new one.
    await this.objects.put(restoredFromPath(this.jobDir), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  listCheckpointDirs(): Promise<CheckpointDirEntry[]> {
    return checkpointDirsS3(this.objects, this.jobDir);
  }

  /** Deletes checkpoint n's objects: below its stable prefix, and with entropy below every injected one. */
  private async deleteCheckpointObjects(checkpointId: CheckpointId): Promise<void> {
    const dir = this.checkpointDir(checkpointId);
    await deleteSnapshotObjects(this.objects, dir);
    if (this.entropy !== null) {
      const e = this.entropy;
      const tail = `${this.jobId}/${baseName(dir)}`;
      await this.objects.deleteAll((await this.objects.list(e.before)).objects.map((o) => o.url).filter((u) => isInjectedUnder(e, u, tail)));
    }
  }

  async discardCheckpoint(checkpointId: CheckpointId): Promise<void> {
    this.discarded.add(checkpointId);
    await this.deleteCheckpointObjects(checkpointId);
  }

  async discardCheckpointAt(location: string): Promise<void> {
    const id = parseCheckpointDirName(baseName(location));
    if (id === null || !isS3Path(location)) throw new StorageError('STORAGE_IO', location, 'not a checkpoint directory (chk-<n>) in S3; refusing to delete it');
    if (parentDir(location) === this.jobDir) {
      this.discarded.add(id);
      await this.deleteCheckpointObjects(id);
      return;
    }
    // Another job's checkpoint this run claimed: its objects below its prefix (its own entropy root is unknown here).
    await deleteSnapshotObjects(this.objects, location);
  }

  async discardShared(handle: StreamStateHandle): Promise<void> {
    if (handle.type === 'inline') return;
    assert(isInside(this.sharedDir, handle.path) && handle.path !== this.sharedDir, () => `discardShared: ${handle.path} is not in ${this.sharedDir}`);
    await this.objects.deleteAll([handle.path]);
  }

  async listSharedFiles(): Promise<string[]> {
    return (await this.objects.list(this.sharedDir)).objects.map((o) => o.url).filter((u) => parentDir(u) === this.sharedDir);
  }

  /** Removes the job's records once no `chk-<n>` is left; shared objects still there stay. */
  async discardJob(): Promise<void> {
    if ((await this.listCheckpointDirs()).length > 0) return;
    await this.objects.deleteAll([runOwnerPath(this.jobDir), restoredFromPath(this.jobDir)]);
  }

  createSavepointTarget(savepointRoot: string, checkpointId: CheckpointId, rand: string): SavepointTarget {
    return this.savepointTargetAt(savepointDir(savepointRoot, checkpointId, rand));
  }

  savepointTargetAt(location: string): SavepointTarget {
    if (isS3Path(location)) {
      parseS3Url(location);
      return new S3SavepointWriter(this.objects, location, this.inlineThresholdBytes);
    }
    if (location.startsWith('memory:'))
      throw new StorageError('STORAGE_IO', location, 'a job checkpointing to S3 writes savepoints to S3 or a directory, not to memory');
    return new FsSavepointWriter(location);
  }
}
