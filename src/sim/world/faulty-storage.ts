/**
 * Checkpoint storage for the simulation: in-memory, with completions delayed through the world's
 * scheduler and faults drawn by the seed (a write fails, a write is torn, the metadata rename
 * fails). It also checks on every delete that no retained checkpoint loses a file (checker d).
 *
 * In object-store mode (S3, `src/storage/s3/`) there is no rename and no torn object: `_metadata`
 * is one create-only PUT, and the same draws strike as an object store fails: an upload is lost or
 * fails (nothing lands), a PUT lands after its request timed out (the writer saw a failure; the
 * object appears later, whoever is alive by then), and a `_metadata` PUT lands but its answer is
 * lost, so the retry is refused as create-only and recognises its own bytes (as `commit.ts` does).
 */
import { StorageError } from '../../core/errors.ts';
import type { CheckpointId, JobId } from '../../core/ids.ts';
import { readMetadataAt } from '../../checkpoint/metadata/read.ts';
import { filePathsOf } from '../../checkpoint/metadata/walk.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { MemoryCheckpointStorage, type MemoryStore } from '../../storage/memory-storage.ts';
import type { CheckpointDirEntry, CheckpointStorage, CheckpointStreamFactory, SnapshotPathProbe } from '../../storage/storage.ts';
import type { SavepointTarget } from '../../storage/savepoint-target.ts';
import type { RestoredFrom } from '../../storage/restored-from.ts';
import type { Random, Scheduler } from '../../core/time.ts';

/** The object-store mode: how late a PUT whose request timed out may land. */
export interface ObjectStoreKnobs {
  readonly latePutDelayMsMax: number;
}

export interface StorageFaultOptions {
  readonly writeFailProbability: number;
  readonly tornWriteProbability: number;
  readonly renameFailProbability: number;
  readonly latencyMsMax: number;
  /** Null: a file system (rename, torn writes); else an object store (see the file comment). */
  readonly objectStore?: ObjectStoreKnobs | null;
}

/** What an object store's faults did in one seed (all processes and clients). */
export interface ObjectStoreCounts {
  /** Uploads that were lost or failed (state objects and `_metadata` PUTs): nothing landed. */
  lostUploads: number;
  /** PUTs that landed after the writer's request had timed out (state objects). */
  latePuts: number;
  /** `_metadata` PUTs whose answer was lost: the create-only retry was refused and found its own bytes. */
  metadataAnswersLost: number;
}

/** Moments a process kill may strike inside storage; the hook returns true when the process just died. */
export type StorageKillSite = 'upload' | 'metadata-before' | 'metadata-after';

/** A promise that never settles: the continuation of a process that died. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

export class FaultyStorage implements CheckpointStorage {
  readonly inner: MemoryCheckpointStorage;
  private activeHere = true;
  readonly injected: { writeFail: number; torn: number; renameFail: number };
  readonly objectStore: ObjectStoreCounts;
  /** Objects that landed after their writer gave up, shared by the seed's clients (the end-of-run check reads it). */
  readonly lateLanded: Set<string>;
  /** Where a late PUT lands from: the world, not the process (a PUT in the network lands after its writer died). */
  network: Scheduler;
  /** Violations of "no file referenced by a retained checkpoint is deleted". */
  readonly violations: string[];
  /** Ids of the checkpoints the coordinator retains right now; set by the runner. */
  retained: () => ReadonlySet<number> = () => new Set();
  /** Where the run may kill the process (set by the run). */
  kill: (site: StorageKillSite) => boolean = () => false;

  constructor(
    jobId: JobId,
    /** The process's scheduler: when the process dies, its storage calls never complete. */
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly options: StorageFaultOptions,
    /** The disk: shared by every process and run of the seed. */
    files?: Map<string, Uint8Array>,
    /** What was discarded in the store this client opened (the job master's storage's); default its own. */
    discarded?: Set<number>,
    /** The job master's storage of the same process, when this is a task manager's client: its faults, counts and kill hooks are this one's. */
    private readonly owner: FaultyStorage | null = null,
  ) {
    this.inner = new MemoryCheckpointStorage(jobId, { inlineThresholdBytes: 64, files, ...(discarded ? { discarded } : {}) });
    this.injected = owner?.injected ?? { writeFail: 0, torn: 0, renameFail: 0 };
    this.objectStore = owner?.objectStore ?? { lostUploads: 0, latePuts: 0, metadataAnswersLost: 0 };
    this.lateLanded = owner?.lateLanded ?? new Set();
    this.network = owner?.network ?? scheduler;
    this.violations = owner?.violations ?? [];
    if (owner !== null) {
      this.kill = (site) => owner.kill(site);
      this.retained = () => owner.retained();
      this.retainedLocations = () => owner.retainedLocations();
    }
  }

  /** Whether faults strike now (a task manager's client follows the job master's storage). */
  get active(): boolean {
    return this.owner?.active ?? this.activeHere;
  }

  set active(on: boolean) {
    this.activeHere = on;
  }

  /**
   * A client of its own of `store` (what a task manager opened from the storage URL), with this
   * storage's faults, drawn from the same seeded stream as they would be here: what a second S3
   * client of the same bucket is, in the same flaky network.
   */
  client(store: MemoryStore): FaultyStorage {
    return new FaultyStorage(this.jobId, this.scheduler, this.random, this.options, store.files, store.discarded, this);
  }

  get description(): string {
    return this.inner.description;
  }

  get jobId(): JobId {
    return this.inner.jobId;
  }

  private latency(): Promise<void> {
    return new Promise((resolve) => this.scheduler.schedule(this.random.next() * this.options.latencyMsMax, resolve));
  }

  private roll(p: number): boolean {
    return this.active && this.random.next() < p;
  }

  initialize(): Promise<{ highestCheckpointId: number }> {
    return this.inner.initialize();
  }

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    const inner = this.inner.streamFactory(checkpointId);
    return {
      checkpointId,
      write: async (scope, nameHint, data) => {
        await this.latency();
        if (this.kill('upload')) return never();
        if (this.roll(this.options.writeFailProbability)) {
          this.injected.writeFail++;
          if (this.options.objectStore) {
            this.objectStore.lostUploads++;
            throw new StorageError('STORAGE_IO', `memory:${nameHint}`, 'injected lost upload (nothing landed)');
          }
          throw new StorageError('STORAGE_IO', `memory:${nameHint}`, 'injected write failure');
        }
        const handle = await inner.write(scope, nameHint, data);
        if (handle.type === 'file' && this.options.objectStore && this.roll(this.options.tornWriteProbability)) {
          this.injected.torn++;
          this.landLate(handle.path, this.options.objectStore);
          throw new StorageError('STORAGE_IO', handle.path, 'injected request timeout (the PUT lands later)');
        }
        if (handle.type === 'file' && !this.options.objectStore && this.roll(this.options.tornWriteProbability)) {
          this.injected.torn++;
          const raw = this.inner.rawFiles();
          const bytes = raw.get(handle.path)!;
          raw.set(handle.path, bytes.subarray(0, Math.floor(bytes.length / 2)));
          throw new StorageError('STORAGE_IO', handle.path, 'injected torn write (the process died mid-write)');
        }
        if (handle.type === 'file') (this.owner ?? this).onFileWritten?.(handle.path);
        return handle;
      },
    };
  }

  /** Told of every state file this process's storage (its task managers' clients too) wrote; the run sets it for a stale leader. */
  onFileWritten: ((path: string) => void) | null = null;

  async readState(handle: StreamStateHandle): Promise<Uint8Array> {
    await this.latency();
    return this.inner.readState(handle);
  }

  checkpointLocation(checkpointId: CheckpointId): string {
    return this.inner.checkpointLocation(checkpointId);
  }

  /** Takes the object just written out of the store and puts it back after a drawn delay: a PUT that lands after its request timed out. */
  private landLate(path: string, o: ObjectStoreKnobs): void {
    const raw = this.inner.rawFiles();
    const bytes = raw.get(path)!;
    raw.delete(path);
    this.objectStore.latePuts++;
    this.network.schedule(this.random.next() * o.latePutDelayMsMax, () => {
      raw.set(path, bytes);
      this.lateLanded.add(path);
    });
  }

  async commitMetadata(checkpointId: CheckpointId, bytes: Uint8Array): Promise<string> {
    await this.latency();
    if (this.options.objectStore) return this.putMetadata(checkpointId, bytes);
    if (this.roll(this.options.renameFailProbability)) {
      this.injected.renameFail++;
      // The temporary file was written; the rename never happened.
      this.inner.rawFiles().set(`${this.inner.checkpointDir(checkpointId)}/_metadata.tmp-sim`, new Uint8Array(8));
      throw new StorageError('STORAGE_IO', `${this.inner.checkpointDir(checkpointId)}/_metadata`, 'injected rename failure');
    }
    if (this.kill('metadata-before')) return never();
    const location = await this.inner.commitMetadata(checkpointId, bytes);
    if (this.kill('metadata-after')) return never();
    return location;
  }

  /**
   * Object-store commit: one create-only PUT, no rename. The rename draw strikes as a lost PUT
   * (nothing lands) or, one time in two, as a PUT that landed whose answer was lost: the retry is
   * refused (412) and the object holds our bytes, which is our own commit.
   */
  private async putMetadata(checkpointId: CheckpointId, bytes: Uint8Array): Promise<string> {
    const file = `${this.inner.checkpointDir(checkpointId)}/_metadata`;
    const struck = this.roll(this.options.renameFailProbability);
    if (struck && this.random.next() < 0.5) {
      this.injected.renameFail++;
      this.objectStore.lostUploads++;
      throw new StorageError('STORAGE_IO', file, 'injected lost _metadata PUT (nothing landed)');
    }
    const existing = this.inner.rawFiles().get(file);
    if (existing !== undefined) throw new StorageError('STORAGE_IO', file, `checkpoint ${checkpointId} is already committed (create-only _metadata refused)`);
    if (this.kill('metadata-before')) return never();
    const location = await this.inner.commitMetadata(checkpointId, bytes);
    if (this.kill('metadata-after')) return never();
    if (struck) {
      // The answer was lost; the retry's create-only PUT is refused, and the object is ours.
      this.injected.renameFail++;
      this.objectStore.metadataAnswersLost++;
      await this.latency();
      const found = this.inner.rawFiles().get(file);
      if (found === undefined || Buffer.compare(Buffer.from(found), Buffer.from(bytes)) !== 0)
        throw new StorageError('STORAGE_IO', file, `checkpoint ${checkpointId}: create-only _metadata refused and the object is not ours`);
    }
    return location;
  }

  readMetadataBytes(location: string): Promise<Uint8Array> {
    return this.inner.readMetadataBytes(location);
  }

  probe(p: string): Promise<SnapshotPathProbe> {
    return this.inner.probe(p);
  }

  dirSizeBytes(location: string): Promise<number> {
    return this.inner.dirSizeBytes(location);
  }

  checkStateFile(handle: StreamStateHandle & { type: 'file' | 'range' }): Promise<void> {
    return this.inner.checkStateFile(handle);
  }

  readRestoredFrom(jobDir: string): Promise<RestoredFrom | null> {
    return this.inner.readRestoredFrom(jobDir);
  }

  recordRestoredFrom(r: RestoredFrom): Promise<void> {
    return this.inner.recordRestoredFrom(r);
  }

  listCheckpointDirs(): Promise<CheckpointDirEntry[]> {
    return this.inner.listCheckpointDirs();
  }

  async discardCheckpoint(checkpointId: CheckpointId): Promise<void> {
    if (this.retained().has(checkpointId)) this.violations.push(`checkpoint ${checkpointId} was deleted while retained`);
    await this.latency();
    return this.inner.discardCheckpoint(checkpointId);
  }

  /** Locations of the checkpoints the coordinator retains right now; set by the runner. */
  retainedLocations: () => ReadonlySet<string> = () => new Set();

  async discardCheckpointAt(location: string): Promise<void> {
    if (this.retainedLocations().has(location)) this.violations.push(`checkpoint at ${location} was deleted while retained`);
    await this.latency();
    return this.inner.discardCheckpointAt(location);
  }

  // ---- shared files (incremental, reference-counted across checkpoints) ----

  get sharedDir(): string {
    return this.inner.sharedDir;
  }

  listSharedFiles(): Promise<string[]> {
    return this.inner.listSharedFiles();
  }

  /** Checker (d) for shared files: no retained checkpoint may refer to a shared file being deleted. */
  async discardShared(handle: StreamStateHandle): Promise<void> {
    if (handle.type === 'file') {
      for (const location of this.retainedLocations()) {
        const meta = await readMetadataAt(this.inner, location).catch(() => null);
        if (meta !== null && filePathsOf(meta).includes(handle.path)) {
          this.violations.push(`shared file ${handle.path} was deleted while retained checkpoint ${meta.checkpointId} refers to it`);
        }
      }
    }
    await this.latency();
    return this.inner.discardShared(handle);
  }

  discardJob(): Promise<void> {
    return this.inner.discardJob();
  }

  createSavepointTarget(savepointRoot: string, checkpointId: CheckpointId, rand: string): SavepointTarget {
    return this.inner.createSavepointTarget(savepointRoot, checkpointId, rand);
  }

  savepointTargetAt(location: string): SavepointTarget {
    return this.inner.savepointTargetAt(location);
  }

  /** Paths of every stored file of this job (savepoints are the user's, not the job's). */
  files(): string[] {
    return [...this.inner.rawFiles().keys()].filter((f) => !f.startsWith('memory:savepoints/'));
  }
}
