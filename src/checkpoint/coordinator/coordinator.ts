/**
 * CheckpointCoordinator: triggers checkpoints (on the interval, on demand, and the final one when
 * every source ended), collects acknowledgements, writes the metadata durably, then notifies every
 * subtask. Enforces timeout, maxConcurrent and minPause; counts consecutive failures against
 * tolerableFailures; keeps the retained checkpoints and deletes the ones they subsume.
 */
import { errorMessage, HaError, WeirError } from '../../core/errors.ts';
import { checkpointId as toCheckpointId, type CheckpointId, type JobId, type TaskId } from '../../core/ids.ts';
import type { Cancellable, Environment } from '../../core/time.ts';
import type { CheckpointBarrier, CheckpointOptions } from '../barrier/barrier.ts';
import type { CheckpointAck } from '../ack.ts';
import type { CheckpointStorage, CheckpointStreamFactory } from '../../storage/storage.ts';
import type { SavepointTarget } from '../../storage/savepoint-target.ts';
import { countsAsCheckpointFailure, type CheckpointFailureReason } from '../failure-reason.ts';
import { commitCheckpointMetadata, commitSavepointMetadata } from '../metadata/commit.ts';
import type { CheckpointStats } from './checkpoint-stats.ts';
import type { CompletedCheckpoint } from './completed-checkpoint.ts';
import { CompletedCheckpointStore } from './completed-checkpoint-store.ts';
import type { CheckpointingConfig } from './config.ts';
import { onAborted, onCompleted, onEndOfData, onFinalTriggered, onStopRequested, periodicAllowed, RUNNING, type Ending } from './job-ending.ts';
import { PendingCheckpoint, type OperatorInfo } from './pending-checkpoint.ts';
import { SharedStateFiles } from './shared-state.ts';

/** What the coordinator needs from the job master. */
export interface CoordinatorContext {
  /** Whether every subtask of the current attempt is running. */
  allTasksRunning(): boolean;
  expectedTasks(): readonly TaskId[];
  operators(): readonly OperatorInfo[];
  triggerSources(barrier: CheckpointBarrier): void;
  notifyComplete(checkpointId: CheckpointId): void;
  notifyAborted(checkpointId: CheckpointId): void;
  /** Too many consecutive checkpoint failures: the job must fail over. */
  failJob(error: Error): void;
  /** A line for the log (checkpoint failures, fallbacks). */
  log(message: string): void;
  /**
   * High availability: makes a checkpoint whose `_metadata` is durable the newest in the HA store,
   * before any subtask is told it completed. A rejection (this job master no longer leads) fails
   * the checkpoint with LEADERSHIP_LOST, so nothing commits for it. Absent: no HA.
   */
  publishCompleted?(checkpointId: CheckpointId, location: string): Promise<void>;
}

export { CheckpointFailedError } from './pending-checkpoint.ts';

export class CheckpointCoordinator {
  private readonly pending = new Map<number, PendingCheckpoint>();
  private readonly finalizing = new Set<Promise<void>>();
  private readonly discarding = new Set<Promise<void>>();
  readonly store: CompletedCheckpointStore;
  readonly history: CheckpointStats[] = [];
  private nextId: number;
  private lastCompletionMs = -Infinity;
  private consecutiveFailures = 0;
  private periodic: Cancellable | null = null;
  private running = false;
  private ending: Ending = RUNNING;
  /** Reference counts of shared (incremental) files: one is deleted only when no checkpoint can refer to it. */
  private readonly sharedState: SharedStateFiles;

  constructor(
    private readonly jobId: JobId,
    private readonly config: CheckpointingConfig,
    private readonly storage: CheckpointStorage,
    private readonly env: Environment,
    private readonly ctx: CoordinatorContext,
    firstCheckpointId = 1,
  ) {
    this.store = new CompletedCheckpointStore(config.retained);
    this.nextId = firstCheckpointId;
    this.sharedState = new SharedStateFiles(storage, (message) => ctx.log(message));
  }

  get numPending(): number {
    return this.pending.size;
  }

  get failureCount(): number {
    return this.consecutiveFailures;
  }

  /** Starts (or restarts after a failover) periodic triggering. */
  start(): void {
    this.running = true;
    this.ending = RUNNING;
    this.trackShared(this.sharedState.atAttemptStart(this.store.all(), this.nextId)); // deletes what uploads a crash cut off left
    if (this.config.intervalMs !== null) this.schedulePeriodic(this.config.intervalMs);
  }

  /** Stops triggering and aborts what is pending (for a failover or shutdown); waits for metadata writes in flight. */
  async suspend(reason: CheckpointFailureReason): Promise<void> {
    this.running = false;
    this.periodic?.cancel();
    this.periodic = null;
    for (const p of [...this.pending.values()]) if (p.state === 'collecting') this.abort(p, reason);
    await Promise.all([...this.finalizing]);
  }

  // ---- triggering ----

  private schedulePeriodic(delayMs: number): void {
    this.periodic?.cancel();
    this.periodic = this.env.scheduler.schedule(delayMs, () => {
      this.periodic = null;
      if (!this.running) return;
      const waitMs = this.tryTriggerPeriodic();
      this.schedulePeriodic(waitMs ?? this.config.intervalMs!);
    });
  }

  /** Returns how long to wait before the next attempt when minPause holds it back. */
  private tryTriggerPeriodic(): number | null {
    if (!periodicAllowed(this.ending)) return null;
    if (this.pending.size >= this.config.maxConcurrent) return null;
    const sinceLast = this.env.clock.now() - this.lastCompletionMs;
    if (sinceLast < this.config.minPauseMs) return this.config.minPauseMs - sinceLast;
    if (!this.ctx.allTasksRunning()) return null;
    this.trigger(this.checkpointOptions(false));
    return null;
  }

  /** How barriers of a checkpoint align, from the configuration; savepoints are always aligned. */
  private checkpointOptions(isFinal: boolean): CheckpointOptions {
    const c = this.config;
    if (c.mode === 'at-least-once') return { kind: 'checkpoint', alignment: 'at-least-once', alignedTimeoutMs: null, isFinal };
    if (!c.unaligned) return { kind: 'checkpoint', alignment: 'aligned', alignedTimeoutMs: null, isFinal };
    if (c.alignedCheckpointTimeoutMs === 0) return { kind: 'checkpoint', alignment: 'unaligned', alignedTimeoutMs: null, isFinal };
    return { kind: 'checkpoint', alignment: 'aligned', alignedTimeoutMs: c.alignedCheckpointTimeoutMs, isFinal };
  }

  /** Triggers a checkpoint now (on demand); resolves when it completes, rejects when it fails. */
  triggerNow(): Promise<CompletedCheckpoint> {
    if (!this.running || !this.ctx.allTasksRunning()) {
      return Promise.reject(new WeirError('CHECKPOINT_FAILED', 'cannot trigger a checkpoint: not all subtasks are running'));
    }
    const finishing = this.refuseWhileFinishing('trigger a checkpoint');
    if (finishing) return Promise.reject(finishing);
    return this.trigger(this.checkpointOptions(false)).completion;
  }

  /**
   * Once every source ended or a stop began, the only checkpoint left is the final one: another
   * barrier after it would tell the subtasks the final checkpoint failed, and the job would never
   * finish.
   */
  private refuseWhileFinishing(what: string): WeirError | null {
    if (this.ending.phase === 'running') return null;
    return new WeirError('CHECKPOINT_FAILED', `cannot ${what}: the job is finishing (${this.ending.phase})`);
  }

  /**
   * Triggers a savepoint into `target`: always aligned, never subsumed, never deleted. It commits
   * sinks only with `stop` (stop-with-savepoint: sources stop at its barrier and, once it is
   * complete and committed, the job finishes); otherwise its transactions commit with the next
   * checkpoint, so a later recovery from an older checkpoint cannot duplicate them.
   */
  triggerSavepoint(makeTarget: (checkpointId: CheckpointId) => SavepointTarget, stop: boolean): Promise<CompletedCheckpoint> {
    if (!this.running || !this.ctx.allTasksRunning()) {
      return Promise.reject(new WeirError('CHECKPOINT_FAILED', 'cannot take a savepoint: not all subtasks are running'));
    }
    if (!stop) {
      const finishing = this.refuseWhileFinishing('take a savepoint');
      if (finishing) return Promise.reject(finishing);
    }
    const id = toCheckpointId(this.nextId);
    if (stop) {
      // A stop-with-savepoint is the job's final checkpoint: no periodic ones, never two finals at once.
      const next = onStopRequested(this.ending, id);
      if (next === null)
        return Promise.reject(
          new WeirError(
            'CHECKPOINT_FAILED',
            `cannot stop with a savepoint: the job is already ${this.ending.phase === 'finished' ? 'finishing' : 'stopping or taking its final checkpoint'}`,
          ),
        );
      this.ending = next;
    }
    const target = makeTarget(id);
    return this.trigger({ kind: 'savepoint', alignment: 'aligned', alignedTimeoutMs: null, isFinal: stop, targetLocation: target.location }, target).completion;
  }

  /** Where the subtasks write the state of checkpoint (or savepoint) n. */
  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    return this.pending.get(checkpointId)?.savepointTarget?.streamFactory(checkpointId) ?? this.storage.streamFactory(checkpointId);
  }

  /** Every subtask reached end of data: take the final checkpoint that lets sinks commit. */
  allReachedEndOfData(): void {
    this.ending = onEndOfData(this.ending);
    this.tryTriggerFinal();
  }

  private tryTriggerFinal(): void {
    if (!this.running || this.ending.phase !== 'end-of-data') return;
    if (this.pending.size >= this.config.maxConcurrent) return; // retried when one finishes
    const p = this.trigger(this.checkpointOptions(true));
    this.ending = onFinalTriggered(this.ending, p.checkpointId);
  }

  private trigger(options: CheckpointOptions, savepointTarget: SavepointTarget | null = null): PendingCheckpoint {
    const id = toCheckpointId(this.nextId++);
    const timestampMs = this.env.clock.wallNow();
    const stats: CheckpointStats = {
      checkpointId: id,
      kind: options.kind,
      isFinal: options.isFinal,
      status: 'IN_PROGRESS',
      triggeredAtMs: timestampMs,
      durationMs: 0,
      failureReason: null,
      failureMessage: null,
      subtasks: [],
      persistedBytes: 0,
      location: null,
    };
    const p = new PendingCheckpoint(id, timestampMs, this.env.clock.now(), options, this.ctx.expectedTasks(), stats, savepointTarget);
    this.pending.set(id, p);
    this.history.push(stats);
    if (this.history.length > 100) this.history.shift();
    p.armTimeout(
      this.env.scheduler.schedule(this.config.timeoutMs, () => {
        if (this.pending.get(id) === p && p.state === 'collecting') this.abort(p, 'EXPIRED');
      }),
    );
    this.ctx.triggerSources({ kind: 'barrier', checkpointId: id, timestamp: timestampMs, options });
    return p;
  }

  // ---- acknowledgements ----

  receiveAck(ack: CheckpointAck): void {
    const p = this.pending.get(ack.checkpointId);
    if (p?.state !== 'collecting') return; // late ack of an aborted or finished checkpoint
    if (p.acknowledge(ack) !== 'accepted') return;
    if (p.isFullyAcknowledged) this.complete(p);
  }

  receiveDecline(task: TaskId, checkpointId: CheckpointId, reason: CheckpointFailureReason, cause?: unknown): void {
    const p = this.pending.get(checkpointId);
    if (p?.state !== 'collecting') return;
    this.abort(p, reason, cause ?? `subtask ${task.vertex}/${task.subtask}`);
  }

  private complete(p: PendingCheckpoint): void {
    const metadata = p.startFinalizing(this.jobId, this.ctx.operators());
    const target = p.savepointTarget;
    // Count its shared files before committing; one already deleted means it cannot restore.
    const reuseProblem = target ? null : this.sharedState.registerCompleting(metadata);
    if (reuseProblem !== null) {
      this.abort(p, 'SHARED_FILE_DELETED', reuseProblem);
      return;
    }
    const publish = this.ctx.publishCompleted?.bind(this.ctx);
    const work = (target ? commitSavepointMetadata(target, metadata) : commitCheckpointMetadata(this.storage, metadata)).then(
      (location) =>
        target !== null || publish === undefined
          ? this.onMetadataWritten(p, metadata, location)
          : publish(p.checkpointId, location).then(
              () => this.onMetadataWritten(p, metadata, location),
              (err: unknown) => this.abort(p, 'LEADERSHIP_LOST', err),
            ),
      (err: unknown) => this.abort(p, 'METADATA_WRITE_FAILED', err),
    );
    this.finalizing.add(work);
    void work.finally(() => this.finalizing.delete(work));
  }

  private onMetadataWritten(p: PendingCheckpoint, metadata: CompletedCheckpoint['metadata'], location: string): void {
    this.pending.delete(p.checkpointId);
    const completed = p.finalize(metadata, location, this.env.clock.now());
    this.lastCompletionMs = this.env.clock.now();
    this.consecutiveFailures = 0;
    // Savepoints join the retained snapshots too, as recovery points (after a stop-with-savepoint
    // committed the sinks, recovering from an older checkpoint would repeat that output), but the
    // engine never deletes one.
    const latest = this.store.latest();
    if (latest && latest.checkpointId > completed.checkpointId) {
      // With maxConcurrent > 1 a newer checkpoint can finish its metadata first; this one is
      // subsumed on arrival (the newer one's notification already covers its commits).
      if (completed.kind === 'checkpoint') this.discard(completed.checkpointId);
      return;
    }
    this.retain(completed);
    if (completed.kind === 'checkpoint') {
      this.trackShared(this.sharedState.afterCompleted(completed.metadata)); // released files no subtask can reuse now go
    }
    // Older pending checkpoints are subsumed by this one (a savepoint subsumes nothing).
    if (completed.kind === 'checkpoint') {
      for (const older of [...this.pending.values()]) {
        if (older.checkpointId < p.checkpointId && older.state === 'collecting' && older.options.kind === 'checkpoint')
          this.abort(older, 'SUBSUMED_BY_NEWER_BARRIER');
      }
    }
    this.ending = onCompleted(this.ending, p.checkpointId, p.isFinal);
    const notify = completed.kind === 'checkpoint' || p.isFinal;
    if (this.running && notify) this.ctx.notifyComplete(p.checkpointId);
    this.tryTriggerFinal();
  }

  private abort(p: PendingCheckpoint, reason: CheckpointFailureReason, cause?: unknown): void {
    this.pending.delete(p.checkpointId);
    const error = p.abort(reason, this.env.clock.now(), cause);
    this.ending = onAborted(this.ending, p.checkpointId);
    if (this.running) this.ctx.notifyAborted(p.checkpointId);
    const target = p.savepointTarget;
    if (target) {
      target.discardIncomplete().catch((err: unknown) => this.ctx.log(`could not clean up savepoint ${target.location}: ${errorMessage(err)}`));
      // An upload still running for it no longer finds it pending and writes through the checkpoint
      // storage (`streamFactory`): refuse that and delete what got there, as for a checkpoint
      // (sim seed 1047, window-count, aligned-timeout, left a file in chk-<n>).
      this.discard(p.checkpointId);
      this.ctx.log(error.message);
      // A failed stop-with-savepoint after every source ended leaves the final checkpoint still to take.
      this.retryFinalLater();
      return;
    }
    if (reason === 'LEADERSHIP_LOST') {
      // Another job master leads: this one stops, not retries (the error's code is not retryable),
      // and deletes nothing: the new leader restores what the HA store names, which a pointer write
      // whose answer was lost may have made this very checkpoint.
      this.ctx.log(error.message);
      this.ctx.failJob(new HaError('HA_LEADERSHIP_LOST', `the job master stops: ${error.message}`, { cause: error }));
      return;
    }
    this.discard(p.checkpointId);
    if (reason !== 'JOB_FAILOVER' && reason !== 'COORDINATOR_SHUTDOWN') this.ctx.log(error.message);
    if (countsAsCheckpointFailure(reason)) {
      this.consecutiveFailures++;
      if (this.consecutiveFailures > this.config.tolerableFailures) {
        this.consecutiveFailures = 0;
        this.ctx.failJob(
          new WeirError(
            'CHECKPOINT_FAILED',
            `${this.config.tolerableFailures + 1} consecutive checkpoint failures exceed tolerableFailures=${this.config.tolerableFailures}; last: ${error.message}`,
            { cause: error },
          ),
        );
        return;
      }
    }
    this.retryFinalLater();
  }

  private retryFinalLater(): void {
    if (this.running && this.ending.phase === 'end-of-data') {
      this.env.scheduler.schedule(Math.min(this.config.intervalMs ?? 100, 100), () => this.tryTriggerFinal());
    }
  }

  /**
   * Deletes a checkpoint's files, then releases its shared files. Without a location it is one this
   * attempt wrote, deleted where the storage puts checkpoint n; a retained one that leaves the
   * window is deleted at its location, since a claimed checkpoint lives in another job's folder.
   */
  private discard(checkpointId: CheckpointId, location: string | null = null): void {
    this.sharedState.discarding(checkpointId);
    const deleted = location === null ? this.storage.discardCheckpoint(checkpointId) : this.storage.discardCheckpointAt(location);
    const at = location === null ? '' : ` at ${location}`;
    this.track(
      deleted
        .catch((err: unknown) => this.ctx.log(`could not delete checkpoint ${checkpointId}${at}: ${errorMessage(err)}`))
        .then(() => this.sharedState.afterDiscard(checkpointId, () => this.oldestRetainedId())),
    );
  }

  /** Adds a completed checkpoint to the retained ones and deletes the checkpoints that leave the window (never a savepoint). */
  private retain(completed: CompletedCheckpoint): void {
    for (const old of this.store.add(completed)) if (old.kind === 'checkpoint') this.discard(old.checkpointId, old.location);
  }

  /**
   * Takes ownership of the checkpoint the job was restored from (claim mode): it joins the retained
   * checkpoints and is deleted by retention like the job's own.
   */
  claim(checkpoint: CompletedCheckpoint): void {
    this.sharedState.registerClaimed(checkpoint); // its shared files are counted as the job's own
    this.retain(checkpoint);
  }

  /** Checkpoint ids continue above every id found in storage (complete or not). */
  continueAfter(highestCheckpointId: number): void {
    this.nextId = Math.max(this.nextId, highestCheckpointId + 1);
  }

  /** The job ended: drop retained checkpoints unless retention keeps them. */
  async shutdown(retain: boolean): Promise<void> {
    await this.suspend('COORDINATOR_SHUTDOWN');
    await Promise.all([...this.discarding]);
    if (retain) return this.sharedState.atShutdown(true); // only files no retained checkpoint refers to go
    const all = this.store.shutdown().filter((c) => c.kind === 'checkpoint');
    await Promise.all(all.map((c) => this.storage.discardCheckpointAt(c.location).catch(() => {})));
    await this.sharedState.atShutdown(false); // every own shared file goes
    await this.storage.discardJob().catch(() => {});
  }

  // ---- shared state ----

  private oldestRetainedId(): number | undefined {
    return this.store
      .all()
      .filter((c) => c.kind === 'checkpoint')
      .at(-1)?.checkpointId;
  }

  /** Shared-file work the shutdown waits for, like discards. */
  private trackShared(work: Promise<void>): void {
    this.track(work.catch((err: unknown) => this.ctx.log(`shared state cleanup failed: ${errorMessage(err)}`)));
  }

  /** Deletion work (discards, shared files) the shutdown waits for. */
  private track(work: Promise<void>): void {
    this.discarding.add(work);
    void work.finally(() => this.discarding.delete(work));
  }

  /** The id the next checkpoint will get (ids never repeat within a job, across restarts). */
  get nextCheckpointId(): number {
    return this.nextId;
  }
}
