/**
 * Shared (incremental) state files on the coordinator side: which may be deleted, and when.
 *
 * Counting: every checkpoint about to be committed registers the job's own shared files it refers
 * to (the SharedStateRegistry); a checkpoint that leaves the retained window, fails or is aborted
 * releases them. A file whose count reaches zero is "released". A file is never deleted while a
 * retained checkpoint refers to it (Invariant 5), and files outside this job's `shared/` (of a
 * checkpoint it was restored from) are never deleted at all.
 *
 * Reuse: a subtask's next increment extends the chain of the newest checkpoint it was told
 * completed, which may lag (a lost or late notification) behind what the coordinator retains. So
 * a released file is deleted only once no subtask can still reuse it: a file released while the
 * oldest retained checkpoint was R belongs only to checkpoints older than R, and a subtask that
 * reported (in a completed checkpoint's handles) that it knows a completed checkpoint >= R extends
 * only chains of R or newer. When the newest completed checkpoint shows every subtask at R or
 * beyond, the file goes; a new attempt (restored from a retained checkpoint) frees them all. A
 * checkpoint that still refers to a released file takes it back (its count rises again).
 *
 * Orphans: files of uploads that never became part of a checkpoint (the checkpoint was aborted, or
 * the process died between upload and metadata) are named after their checkpoint id; they are
 * deleted when that checkpoint is discarded, at the start of every attempt, and at shutdown.
 *
 * `SharedStateLedger` decides (pure); `SharedStateFiles` lists and deletes around it.
 */
import { errorMessage } from '../../core/errors.ts';
import type { CheckpointId } from '../../core/ids.ts';
import { keyedHandleKind } from '../../state/handles/registry.ts';
import { SharedStateRegistry } from '../../storage/shared-registry.ts';
import { baseName, checkpointIdOfSharedFile, isInside } from '../../storage/paths.ts';
import type { CheckpointStorage } from '../../storage/storage.ts';
import type { CheckpointMetadata } from '../metadata/metadata.ts';
import { sharedPathsOf } from '../metadata/walk.ts';
import { readCompletedCheckpoints } from '../restore/checkpoint-listing.ts';
import type { CompletedCheckpoint } from './completed-checkpoint.ts';

/** Remembered deleted files and discarded checkpoints, newest kept: enough to catch a stale reuse. */
const REMEMBERED_MAX = 100_000;

function remember<T>(set: Set<T>, value: T): void {
  set.add(value);
  if (set.size > REMEMBERED_MAX) set.delete(set.values().next().value as T);
}

/**
 * The lowest "newest completed checkpoint known" over the subtasks whose keyed state in `meta`
 * reuses files (incremental): how far back any of them may still reuse files. +Infinity when none
 * reuses files, -Infinity when one knows of no completed checkpoint.
 */
export function minKnownCompleted(meta: CheckpointMetadata): number {
  let min = Infinity;
  for (const op of meta.operators) {
    for (const st of op.subtasks) {
      for (const h of st.keyed) min = Math.min(min, keyedHandleKind(h).reusesFilesFrom(h));
    }
  }
  return min;
}

/** Pure bookkeeping of the job's own shared files. */
export class SharedStateLedger {
  private readonly registry = new SharedStateRegistry();
  /** Released files kept while a subtask may reuse them: path -> oldest retained checkpoint id at release. */
  private readonly released = new Map<string, number>();
  /** Files handed out for deletion. */
  private readonly deleted = new Set<string>();
  /** Files of complete checkpoints found in storage that this job will never discard: kept. */
  private readonly pinned = new Set<string>();

  /**
   * Counts the references of checkpoint `checkpointId` to own shared `paths` before it is committed.
   * Returns the paths already deleted: then nothing is registered and the checkpoint must fail.
   */
  register(checkpointId: CheckpointId, paths: readonly string[]): string[] {
    const gone = paths.filter((p) => this.deleted.has(p));
    if (gone.length > 0) return gone;
    this.registry.register(checkpointId, paths);
    for (const p of paths) this.released.delete(p);
    return [];
  }

  isRegistered(checkpointId: CheckpointId): boolean {
    return this.registry.checkpoints().includes(checkpointId);
  }

  /** Forgets checkpoint `checkpointId`; files no registered checkpoint refers to become released. */
  release(checkpointId: CheckpointId, oldestRetained: number): void {
    for (const p of this.registry.release(checkpointId)) {
      if (!this.pinned.has(p)) this.released.set(p, oldestRetained);
    }
  }

  /** Forgets every registered checkpoint (the job ends and keeps none of them). */
  releaseAll(): void {
    for (const id of this.registry.checkpoints()) this.release(id, -Infinity);
  }

  /** Released files no subtask can reuse, given the lowest known completed checkpoint of the newest checkpoint. */
  takeDeletable(lowestKnownCompleted: number): string[] {
    const out: string[] = [];
    for (const [p, oldestRetained] of this.released) if (oldestRetained <= lowestKnownCompleted) out.push(p);
    return this.markDeleted(out);
  }

  /** Every released file: a new attempt's subtasks reuse only files of retained checkpoints. */
  takeAllReleased(): string[] {
    return this.markDeleted([...this.released.keys()]);
  }

  private markDeleted(paths: string[]): string[] {
    for (const p of paths) {
      this.released.delete(p);
      remember(this.deleted, p);
    }
    return paths;
  }

  /** Keeps `paths` for good (a complete checkpoint in storage that this job does not retain). */
  pin(paths: readonly string[]): void {
    for (const p of paths) {
      this.pinned.add(p);
      this.released.delete(p);
    }
  }

  /** An own file no checkpoint refers to and nobody keeps: an orphan to delete. */
  isOrphan(path: string): boolean {
    return !this.registry.counts().has(path) && !this.released.has(path) && !this.pinned.has(path) && !this.deleted.has(path);
  }

  /** Orphans found by listing are deleted too; afterwards a checkpoint reusing them must fail. */
  claimOrphans(paths: readonly string[]): string[] {
    return this.markDeleted(paths.filter((p) => this.isOrphan(p)));
  }

  counts(): ReadonlyMap<string, number> {
    return this.registry.counts();
  }

  releasedFiles(): ReadonlyMap<string, number> {
    return new Map(this.released);
  }
}

/** The coordinator's side of shared files: the ledger, plus listing and deleting in storage. */
export class SharedStateFiles {
  readonly ledger = new SharedStateLedger();
  /** Checkpoints this coordinator discarded (or is discarding): never pinned. */
  private readonly discarded = new Set<number>();
  /** Listing and deleting run one at a time, in call order, so a decision never races a sweep. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: CheckpointStorage,
    private readonly log: (message: string) => void,
  ) {}

  private owns(path: string): boolean {
    const dir = this.storage.sharedDir;
    return dir !== undefined && path !== dir && isInside(dir, path);
  }

  private ownPaths(meta: CheckpointMetadata): string[] {
    const dir = this.storage.sharedDir;
    return dir === undefined ? [] : sharedPathsOf(meta, dir);
  }

  /** Before committing `meta`: counts its files. Returns why it must fail, or null. */
  registerCompleting(meta: CheckpointMetadata): string | null {
    const gone = this.ledger.register(meta.checkpointId, this.ownPaths(meta));
    if (gone.length === 0) return null;
    const message = `checkpoint ${meta.checkpointId} reuses shared file ${gone[0]}, which was already deleted`;
    this.log(message);
    return message;
  }

  /** Counts a checkpoint the job took ownership of (claim mode), unless it is counted already. */
  registerClaimed(checkpoint: CompletedCheckpoint): void {
    if (!this.ledger.isRegistered(checkpoint.checkpointId)) this.ledger.register(checkpoint.checkpointId, this.ownPaths(checkpoint.metadata));
  }

  /** Checkpoint `id` is being discarded (subsumed, failed or aborted). Call `afterDiscard` once its folder is gone. */
  discarding(checkpointId: CheckpointId): void {
    remember(this.discarded, checkpointId);
  }

  /**
   * Checkpoint `checkpointId` was discarded: releases its files (deleted once no subtask can reuse
   * them) and deletes files an upload of it left that no checkpoint refers to. Runs after the storage
   * refuses further writes for it, so a late upload cannot slip in behind the listing.
   */
  afterDiscard(checkpointId: CheckpointId, oldestRetained: () => number | undefined): Promise<void> {
    return this.serially(async () => {
      this.ledger.release(checkpointId, oldestRetained() ?? -Infinity);
      const listed = await this.listOwn();
      await this.delete(this.ledger.claimOrphans(listed.filter((p) => checkpointIdOfSharedFile(baseName(p)) === checkpointId)));
    });
  }

  /** A checkpoint completed and joined the retained ones: deletes released files no subtask can reuse any more. */
  afterCompleted(meta: CheckpointMetadata): Promise<void> {
    return this.serially(() => this.delete(this.ledger.takeDeletable(minKnownCompleted(meta))));
  }

  /** Runs `work` after everything queued before it; never rejects (a failure is logged). */
  private serially(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work).catch((err: unknown) => this.log(`shared state cleanup failed: ${errorMessage(err)}`));
    this.queue = next;
    return next;
  }

  /**
   * A new attempt starts (restored from a retained checkpoint, or from nothing): released files are
   * free, and own files no checkpoint refers to (uploads a crash cut off) are deleted, except those
   * of checkpoints from `nextCheckpointId` on, which this attempt may be writing.
   */
  atAttemptStart(retained: readonly CompletedCheckpoint[], nextCheckpointId: number): Promise<void> {
    for (const c of retained) this.registerClaimed(c);
    return this.serially(async () => {
      await this.delete(this.ledger.takeAllReleased());
      if (!(await this.pinCompleteCheckpoints())) return;
      const listed = await this.listOwn();
      await this.delete(this.ledger.claimOrphans(listed.filter((p) => (checkpointIdOfSharedFile(baseName(p)) ?? Infinity) < nextCheckpointId)));
    });
  }

  /**
   * The job ends. Keeping its retained checkpoints (`retain`), only unreferenced files go; otherwise
   * (its checkpoints are being deleted) every own shared file goes except those of checkpoints it
   * never owned.
   */
  atShutdown(retain: boolean): Promise<void> {
    return this.serially(async () => {
      if (!retain) this.ledger.releaseAll();
      await this.delete(this.ledger.takeAllReleased());
      await this.delete(this.ledger.claimOrphans(await this.listOwn()));
    });
  }

  /** Pins files of complete checkpoints in storage that this job neither retains nor discarded; false if storage could not be listed. */
  private async pinCompleteCheckpoints(): Promise<boolean> {
    try {
      for (const stored of await readCompletedCheckpoints(this.storage)) {
        if (this.discarded.has(stored.checkpointId) || this.ledger.isRegistered(stored.checkpointId)) continue;
        this.ledger.pin(this.ownPaths(stored.metadata));
      }
      return true;
    } catch (err) {
      this.log(`shared state: not cleaning up unreferenced shared files, the checkpoints in storage could not be read: ${errorMessage(err)}`);
      return false;
    }
  }

  private async listOwn(): Promise<string[]> {
    if (this.storage.listSharedFiles === undefined || this.storage.sharedDir === undefined) return [];
    try {
      return (await this.storage.listSharedFiles()).filter((p) => this.owns(p));
    } catch (err) {
      this.log(`shared state: could not list shared files: ${errorMessage(err)}`);
      return [];
    }
  }

  private async delete(paths: readonly string[]): Promise<void> {
    for (const path of paths) {
      if (!this.owns(path)) continue;
      try {
        await this.storage.discardShared({ type: 'file', path, size: 0, checksum: 0 });
      } catch (err) {
        this.log(`could not delete shared file ${path}: ${errorMessage(err)}`);
      }
    }
  }
}
