/**
 * JobMaster: runs one job in this process. Deploys an attempt (restoring every subtask from the
 * same completed checkpoint), hosts the checkpoint coordinator, and on any subtask failure tears
 * the attempt down and restarts by the restart strategy. A checkpoint that fails to verify on
 * restore is dropped and the next older retained one is tried, and the job says so.
 */
import { ConfigError, errorMessage, JobFailedError, RestoreError, StorageError, WeirError } from '../../core/errors.ts';
import type { CheckpointId, JobId } from '../../core/ids.ts';
import { taskKey } from '../../core/ids.ts';
import type { Environment } from '../../core/time.ts';
import { preciseWallNow } from '../../core/wall-time.ts';
import type { CheckpointStats } from '../../checkpoint/coordinator/checkpoint-stats.ts';
import type { CompletedCheckpoint } from '../../checkpoint/coordinator/completed-checkpoint.ts';
import type { CheckpointingConfig } from '../../checkpoint/coordinator/config.ts';
import { CheckpointCoordinator } from '../../checkpoint/coordinator/coordinator.ts';
import type { OperatorInfo } from '../../checkpoint/coordinator/pending-checkpoint.ts';
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import type { JobGraph } from '../../graph/job-graph.ts';
import type { FaultInjector } from '../../runtime/faults.ts';
import { NO_FAULTS } from '../../runtime/faults.ts';
import { directRpc, type Rpc } from '../../runtime/rpc.ts';
import type { TaskId } from '../../core/ids.ts';
import { assert } from '../../core/assert.ts';
import type { TaskGateway } from '../../runtime/task-gateway.ts';
import type { StateBackendFactory } from '../../state/backend.ts';
import type { RestoreCandidate } from '../../checkpoint/restore/restore-candidates.ts';
import type { CheckpointStorage } from '../../storage/storage.ts';
import { baseName, parseSavepointDirName } from '../../storage/paths.ts';
import type { TwoPhaseCommitSink } from '../../runtime/sink.ts';
import type { DeploymentSpec } from '../task-manager/deployment.ts';
import { inThreadDeployer, type AttemptDeployment, type Deployer, type TaskHandle } from './attempt-deployment.ts';
import { decideSinkRecovery, type SinkCommitView, type SkippedCheckpoint } from './sink-recovery.ts';
import type { JobEvent, JobMetrics, JobResult, JobStatus } from './job-events.ts';
import { isTerminalStatus, nextJobStatus, type JobStatusEvent } from './job-status.ts';
import { JobAttempt } from './job-attempt.ts';
import { epochOf, type Epoch } from '../transport/epoch.ts';
import { decideRestart, type RestartStrategyConfig, restartTimesToKeep } from './restart-strategy.ts';
import { CheckpointTraces } from './checkpoint-traces.ts';
import { RecordTotals } from './record-totals.ts';
import type { TaskManagerStatus } from './task-manager-roster.ts';

/** A failure of an attempt, as the dashboard's exceptions view lists it. */
export interface JobException {
  /** Wall-clock ms the job master handled it. */
  readonly atMs: number;
  /** The attempt that failed. */
  readonly attempt: number;
  /** The failure, on one line. */
  readonly message: string;
  /** Whether the restart strategy restarted the job (false: the job failed for good). */
  readonly restarted: boolean;
}

/** Failures kept for the exceptions view. */
const EXCEPTIONS_KEPT = 50;

export interface JobMasterConfig {
  readonly jobId: JobId;
  readonly name: string;
  readonly graph: JobGraph;
  readonly checkpointing: CheckpointingConfig;
  readonly restartStrategy: RestartStrategyConfig;
  readonly backends: StateBackendFactory;
  readonly storage: CheckpointStorage;
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  /** What the job may start from, newest first (`restoreCandidates` of `--from`); empty: start from nothing. */
  readonly restoreCandidates: readonly RestoreCandidate[];
  readonly allowNonRestoredState: boolean;
  /** Restore even where a sink would commit output a second time (see sink-recovery.ts). */
  readonly acceptDuplicates: boolean;
  /**
   * Claim mode: the job takes ownership of the checkpoint it restores from, and retention may delete
   * it. Default (no claim): it is never touched, and the job's first checkpoint is a full one.
   */
  readonly claim: boolean;
  /** Where subtasks run: in this thread (default) or in task managers (remote-deployment.ts). */
  readonly deployer?: Deployer;
  /**
   * This job master's leader epoch (default 0), the first half of every attempt's epoch: task
   * managers refuse control messages of an older one. A job master that takes over from another
   * runs with a higher one.
   */
  readonly leaderEpoch?: number;
  /**
   * High availability: publishes each completed checkpoint to the HA store under this job master's
   * lease before any subtask hears of it (CoordinatorContext.publishCompleted). Absent: no HA.
   */
  readonly publishCompleted?: (checkpointId: CheckpointId, location: string) => Promise<void>;
}

/** Test and simulation hooks; production leaves them unset. */
export interface ExecutionHooks {
  readonly env?: Environment;
  readonly faults?: FaultInjector;
  readonly rpc?: Rpc;
  readonly onEvent?: (event: JobEvent) => void;
  readonly elementsPerStep?: number;
  readonly sourceBatchRecords?: number;
}

export class JobMaster {
  private status: JobStatus = 'CREATED';
  /** The attempt the job is on: the one running, deploying, stopping after a failure, or scheduled to restart; null before start(). */
  private current: JobAttempt | null = null;
  /** The newest attempt that reached running (what the job restored from last). */
  private lastRunning: JobAttempt | null = null;
  /** This job master's leader epoch (0 without high availability). */
  readonly leaderEpoch: number;
  private restarts = 0;
  /** `Clock.now()` of the newest restarts, as many as the restart strategy looks at (bounded). */
  private readonly restartTimesMs: number[] = [];
  private readonly deployer: Deployer;
  private readonly coordinator: CheckpointCoordinator;
  private readonly rpc: Rpc;
  private readonly faults: FaultInjector;
  private settle!: { resolve(r: JobResult): void; reject(e: Error): void };
  readonly result: Promise<JobResult>;
  private lastCheckpoint: CheckpointStats | null = null;
  /** The `--from` candidates not yet found unusable; they stay the last resort until the job has checkpoints of its own. */
  private initialCandidates: RestoreCandidate[];
  private claimed = false;
  /** Control messages of another attempt than the current one that reached the job master (dropped). */
  private staleControl = 0;
  /** Drawn once per JobMaster, i.e. per process: run ids (`<tag>-a<attempt>`) stay unique across processes that restore the same checkpoint. */
  readonly processTag: string;
  /** Per-checkpoint events for the REST API and the dashboard (bounded). */
  readonly traces = new CheckpointTraces();
  private readonly failures: JobException[] = [];
  /** Wall-clock ms the job master was created. */
  readonly startedAtMs: number;
  private endedAt: number | null = null;
  /** Record counts of the attempts torn down so far, per subtask (the figures across attempts). */
  readonly recordTotals = new RecordTotals();
  /** Attempts that ran restored from a checkpoint. */
  private restoreCount = 0;

  constructor(
    private readonly cfg: JobMasterConfig,
    private readonly env: Environment,
    private readonly hooks: ExecutionHooks = {},
  ) {
    this.rpc = hooks.rpc ?? directRpc(env.scheduler);
    this.faults = hooks.faults ?? NO_FAULTS;
    this.deployer = cfg.deployer ?? inThreadDeployer;
    this.leaderEpoch = cfg.leaderEpoch ?? 0;
    if (!Number.isInteger(this.leaderEpoch) || this.leaderEpoch < 0) throw new ConfigError('leaderEpoch', `must be an integer >= 0, got ${cfg.leaderEpoch}`);
    this.initialCandidates = [...cfg.restoreCandidates];
    this.processTag = randomTag(env.random);
    this.startedAtMs = env.clock.wallNow();
    const firstId = Math.max(0, ...cfg.restoreCandidates.map((c) => c.checkpointId)) + 1;
    this.coordinator = new CheckpointCoordinator(cfg.jobId, cfg.checkpointing, cfg.storage, env, this.coordinatorContext(), firstId);
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.result.catch(() => {}); // observed by callers; avoid an unhandled rejection when nobody awaits
  }

  get checkpointCoordinator(): CheckpointCoordinator {
    return this.coordinator;
  }

  /** Whether subtasks run in task managers rather than in this thread. */
  get runsOnTaskManagers(): boolean {
    return this.cfg.deployer !== undefined;
  }

  /** The job's id, name, graph and checkpointing configuration. */
  get config(): Pick<JobMasterConfig, 'jobId' | 'name' | 'graph' | 'checkpointing' | 'restartStrategy'> {
    return this.cfg;
  }

  /** How many times the job restarted after failures. */
  get restartCount(): number {
    return this.restarts;
  }

  /** The checkpoint the current attempt restored from, or null when it started empty. */
  get restoredFrom(): number | null {
    return this.lastRunning?.restoredFrom?.checkpointId ?? null;
  }

  /** The latest restore: which checkpoint, when it was running again (wall-clock ms), how long deploying and restoring took, and how many attempts restored one; null before any. */
  get latestRestore(): { readonly checkpointId: number; readonly atMs: number; readonly durationMs: number; readonly count: number } | null {
    const restored = this.lastRunning?.restoredFrom ?? null;
    const atMs = this.lastRunning?.restoredAtMs ?? null;
    const durationMs = this.lastRunning?.restoreDurationMs ?? null;
    return restored === null || atMs === null || durationMs === null
      ? null
      : { checkpointId: restored.checkpointId, atMs, durationMs, count: this.restoreCount };
  }

  /** The current attempt's epoch (leader epoch and attempt number); null before the job started. */
  get epoch(): Epoch | null {
    return this.current?.epoch ?? null;
  }

  /**
   * Control messages the job master dropped because they belong to another attempt than the
   * current one (a late ack, decline or task failure of an attempt already torn down).
   */
  get staleControlMessages(): number {
    return this.staleControl;
  }

  /** The failures of attempts so far, oldest first (the newest 50). */
  get exceptions(): readonly JobException[] {
    return this.failures;
  }

  /** Wall-clock ms the job reached FINISHED, CANCELED or FAILED; null while it runs or restarts. */
  /** Wall-clock ms the latest attempt that ran started running; null before one did. */
  get runningSinceMs(): number | null {
    return this.lastRunning?.runningAtMs ?? null;
  }

  get endedAtMs(): number | null {
    return this.endedAt;
  }

  /** Its Clock.now() (monotone, ms): what the subtasks' changelog stamps (`materializedAtMs`) are on, wherever the subtasks run. */
  clockNow(): number {
    return this.env.clock.now();
  }

  get tasks(): readonly TaskHandle[] {
    return this.current?.tasks ?? [];
  }

  /**
   * The task managers of the newest attempt (where it runs, whether each lives, its last heartbeat,
   * clock offset, data traffic and subtasks); empty when subtasks run in this thread. They stay
   * listed, stopped or dead, after the attempt until the next one runs on others.
   */
  taskManagers(): readonly TaskManagerStatus[] {
    return this.deployer.taskManagers?.() ?? [];
  }

  start(): void {
    assert(this.current === null, () => `job '${this.cfg.name}' was started twice`);
    const first = new JobAttempt(epochOf(this.leaderEpoch, 0));
    this.current = first;
    void this.runAttempt(first);
  }

  /** The current attempt's number: 0, then one more per restart. */
  private get attemptNumber(): number {
    return this.current?.epoch.attempt ?? 0;
  }

  metrics(): JobMetrics {
    let recordsIn = 0;
    let recordsOut = 0;
    for (const task of this.tasks) {
      recordsIn += task.sourceRecordsOut;
      recordsOut += task.sinkRecordsIn;
    }
    const total = this.recordTotals.job(this.tasks);
    return {
      status: this.status,
      attempt: this.attemptNumber,
      recordsIn,
      recordsOut,
      recordsInTotal: total.sourceRecordsOut,
      recordsOutTotal: total.sinkRecordsIn,
      lastCheckpoint: this.lastCheckpoint,
    };
  }

  /** Stops the job; retained checkpoints stay if retention says so. */
  async cancel(): Promise<void> {
    if (this.isTerminal()) return;
    this.moveStatus('cancel');
    this.endedAt = this.env.clock.wallNow();
    const stopped = this.teardown();
    await this.coordinator.shutdown(this.cfg.checkpointing.retainOnCancel);
    await stopped;
    this.deployer.dispose?.();
    this.emit({ type: 'canceled' });
    this.settle.resolve(this.resultOf('CANCELED'));
  }

  /**
   * The process died (the simulator's process kill): the running attempt's subtasks are torn down —
   * their files and store handles closed, as the operating system would — and nobody is told.
   */
  abandonAttempt(): void {
    // The process is gone: nothing follows, so the attempt keeps its phase.
    this.current?.deployment?.abandon();
  }

  /** Fails the current attempt from outside (the simulator's "restart the job now"); the restart strategy decides what follows. */
  failGlobal(error: Error): void {
    if (this.status === 'RUNNING') this.onAttemptFailure(this.current, error);
  }

  /** Triggers a checkpoint now; resolves when it completes. */
  triggerCheckpoint(): Promise<CompletedCheckpoint> {
    return this.coordinator.triggerNow();
  }

  /** Takes a savepoint under `savepointRoot`; resolves with it once its metadata is written. The job goes on. */
  savepoint(savepointRoot: string): Promise<CompletedCheckpoint> {
    return this.coordinator.triggerSavepoint((id) => this.cfg.storage.createSavepointTarget(savepointRoot, id, this.randomSuffix()), false);
  }

  /**
   * Stop-with-savepoint: sources stop at the savepoint's barrier; once it is complete the sinks
   * commit it and the job finishes. If the savepoint fails, the job goes on running.
   */
  async stopWithSavepoint(savepointRoot: string): Promise<CompletedCheckpoint> {
    const savepoint = await this.coordinator.triggerSavepoint((id) => this.cfg.storage.createSavepointTarget(savepointRoot, id, this.randomSuffix()), true);
    const attempt = this.attemptNumber;
    await this.result;
    if (this.attemptNumber !== attempt) {
      // The job failed before it could finish and recovered (from this savepoint): it ran on.
      throw new WeirError(
        'CHECKPOINT_FAILED',
        `stop-with-savepoint: savepoint ${savepoint.checkpointId} at ${savepoint.location} completed, but the job failed before it finished stopping, recovered and ran on instead`,
      );
    }
    return savepoint;
  }

  private randomSuffix(): string {
    return this.env.random.int(0x1000000).toString(16).padStart(6, '0');
  }

  private isTerminal(): boolean {
    return isTerminalStatus(this.status);
  }

  private moveStatus(event: JobStatusEvent): void {
    this.status = nextJobStatus(this.status, event);
  }

  private emit(event: JobEvent): void {
    this.hooks.onEvent?.(event);
  }

  // ---- attempts ----

  private async runAttempt(attempt: JobAttempt): Promise<void> {
    // Ended while it waited for its restart delay (the job was cancelled): nothing to deploy.
    if (attempt !== this.current || !attempt.isIn('scheduled')) return;
    attempt.deploy(this.env.clock.wallNow());
    let deployment: AttemptDeployment;
    let restoredFrom: CompletedCheckpoint | null;
    try {
      const { highestCheckpointId } = await this.cfg.storage.initialize();
      this.coordinator.continueAfter(highestCheckpointId);
      ({ deployment, restoredFrom } = await this.deployFromLatest(attempt));
    } catch (err) {
      this.onAttemptFailure(attempt, err);
      return;
    }
    if (this.isTerminal() || !attempt.isIn('deploying')) {
      void deployment.teardown();
      return;
    }
    attempt.deployed(deployment, restoredFrom);
    try {
      await attempt.open().open();
    } catch (err) {
      this.onAttemptFailure(attempt, err);
      return;
    }
    if (this.isTerminal() || !attempt.isIn('opening')) return;
    this.moveStatus('run');
    deployment.start();
    attempt.run(this.env.clock.wallNow());
    this.coordinator.start();
    this.lastRunning = attempt;
    if (restoredFrom !== null) this.restoreCount++;
    this.emit({ type: 'running', attempt: attempt.epoch.attempt, restoredFrom: restoredFrom?.checkpointId ?? null });
  }

  /**
   * Deploys from the newest checkpoint that verifies, falling back to older retained ones, then
   * reconciles the sinks with the choice (sink-recovery.ts): a restore that would repeat committed
   * output is rolled back by the sink or refused.
   */
  private async deployFromLatest(attempt: JobAttempt): Promise<{ deployment: AttemptDeployment; restoredFrom: CompletedCheckpoint | null }> {
    const spec = this.deploymentSpec(attempt);
    const skipped: SkippedCheckpoint[] = [];
    for (const candidate of this.restoreCandidates()) {
      let restored: CompletedCheckpoint;
      let deployment: AttemptDeployment;
      try {
        restored = await candidate.load();
        const notOwned = (candidate.initial && !this.cfg.claim) || restored.kind === 'savepoint';
        deployment = await this.deployer(spec, restored.metadata, notOwned);
      } catch (err) {
        if (!(err instanceof StorageError)) throw err;
        this.coordinator.store.remove(candidate.checkpointId);
        this.initialCandidates = this.initialCandidates.filter((c) => c.location !== candidate.location);
        const reason = `${candidate.kind} ${candidate.checkpointId} at ${candidate.location} does not verify: ${err.message}`;
        skipped.push({ checkpointId: candidate.checkpointId, reason: err.message });
        this.emit({ type: 'restore-fallback', checkpointId: candidate.checkpointId, location: candidate.location, reason });
        this.emit({ type: 'log', message: `${reason}; falling back to an older retained checkpoint` });
        continue;
      }
      await this.reconcileSinks(restored.checkpointId, skipped, deployment);
      if (candidate.via !== undefined) {
        const why =
          skipped.length > 0 ? `${skipped.map((s) => `checkpoint ${s.checkpointId}`).join(', ')} did not verify` : 'it completed no checkpoint of its own';
        this.emit({ type: 'log', message: `restoring from ${restored.kind} ${restored.checkpointId} at ${candidate.location}: ${candidate.via} (${why})` });
      }
      if (candidate.initial)
        await this.cfg.storage.recordRestoredFrom({ location: candidate.location, checkpointId: restored.checkpointId, kind: restored.kind });
      if (candidate.initial && this.cfg.claim && restored.kind === 'checkpoint' && !this.claimed) {
        this.claimed = true;
        this.coordinator.claim(restored);
      }
      return { deployment, restoredFrom: restored };
    }
    if (skipped.length > 0) {
      throw new JobFailedError(
        `nothing to restore job '${this.cfg.name}' from verifies: ${skipped.map((s) => `checkpoint ${s.checkpointId}: ${s.reason}`).join('; ')}`,
      );
    }
    const deployment = await this.deployer(spec, null, false);
    await this.reconcileSinks(null, skipped, deployment);
    return { deployment, restoredFrom: null };
  }

  /** Newest first: the job's own retained checkpoints, then the `--from` candidates it has no copy of. */
  private restoreCandidates(): Array<{
    checkpointId: number;
    location: string;
    kind: string;
    initial: boolean;
    via?: string;
    load(): Promise<CompletedCheckpoint>;
  }> {
    const own = this.coordinator.store
      .all()
      .map((c) => ({ checkpointId: c.checkpointId, location: c.location, kind: c.kind, initial: false, load: async () => c }));
    const held = new Set(own.map((c) => c.location));
    const initial = this.initialCandidates
      .filter((c) => !held.has(c.location))
      .map((c) => ({
        checkpointId: c.checkpointId,
        location: c.location,
        kind: parseSavepointDirName(baseName(c.location)) === null ? 'checkpoint' : 'savepoint',
        initial: true,
        ...(c.via === undefined ? {} : { via: c.via }),
        load: async (): Promise<CompletedCheckpoint> => {
          const metadata = await c.load();
          return { checkpointId: metadata.checkpointId, metadata, location: c.location, kind: metadata.kind };
        },
      }));
    return [...own, ...initial];
  }

  /** Asks every two-phase-commit sink what it committed and carries out the sink-aware rule. */
  private async reconcileSinks(restoreId: number | null, skipped: readonly SkippedCheckpoint[], deployment: AttemptDeployment): Promise<void> {
    const sinks = twoPhaseSinksOf(this.cfg.graph);
    const views: SinkCommitView[] = [];
    for (const { uid, name, sink } of sinks) {
      const newestCommitted = sink.newestCommitted ? await sink.newestCommitted() : undefined;
      views.push({ uid, name, newestCommitted, canRollBack: sink.rollBackAfter !== undefined });
    }
    const decision = decideSinkRecovery({ restoreId, skipped, acceptDuplicates: this.cfg.acceptDuplicates }, views);
    if (decision.kind === 'refuse') {
      void deployment.teardown();
      throw new JobFailedError(decision.message);
    }
    for (const warning of decision.warnings) this.emit({ type: 'log', message: warning });
    for (const rollBack of decision.rollBacks) {
      const sink = sinks.find((s) => s.uid === rollBack.uid)!.sink;
      const what = await sink.rollBackAfter!(rollBack.after);
      this.emit({ type: 'sink-rolled-back', uid: rollBack.uid, after: rollBack.after, description: what });
      this.emit({
        type: 'log',
        message: `sink '${rollBack.name}' (uid '${rollBack.uid}') committed output after checkpoint ${rollBack.after}, which the job restores: ${what}`,
      });
    }
  }

  private deploymentSpec(attempt: JobAttempt): DeploymentSpec {
    return {
      graph: this.cfg.graph,
      epoch: attempt.epoch,
      runId: `${this.processTag}-a${attempt.epoch.attempt}`,
      backends: this.cfg.backends,
      storage: this.cfg.storage,
      streams: (id: CheckpointId) => this.coordinator.streamFactory(id),
      env: this.env,
      faults: this.faults,
      gateway: this.gateway(attempt),
      log: (message) => this.emit({ type: 'log', message }),
      onStaleControl: () => this.staleControl++,
      bufferRecords: this.cfg.bufferRecords,
      channelCapacity: this.cfg.channelCapacity,
      elementsPerStep: this.hooks.elementsPerStep ?? 64,
      sourceBatchRecords: this.hooks.sourceBatchRecords ?? this.cfg.bufferRecords,
      allowNonRestoredState: this.cfg.allowNonRestoredState,
    };
  }

  private onAttemptFailure(attempt: JobAttempt | null, err: unknown): void {
    // One failure per attempt: the first ends it; later ones of the same attempt are its echoes.
    if (attempt === null || this.isTerminal() || attempt !== this.current || !attempt.endable) return;
    this.moveStatus('restart');
    // The next attempt starts once every subtask of this one stopped (a stuck one is terminated after cancellationTimeoutMs).
    const stopped = this.teardown();
    const cause = errorMessage(err);
    void Promise.all([this.coordinator.suspend('JOB_FAILOVER'), stopped]).then(() => {
      if (this.isTerminal()) return;
      // A configuration error (a missing directory an option names) comes back on every retry.
      const hopeless = err instanceof JobFailedError || err instanceof RestoreError || err instanceof ConfigError;
      const decision = hopeless
        ? { restart: false as const, why: 'this failure would come back on every retry (a job that cannot be built or restored, or a configuration error)' }
        : decideRestart(this.cfg.restartStrategy, { restartsSoFar: this.restarts, restartTimesMs: this.restartTimesMs }, this.env.clock.now(), err);
      this.recordFailure(attempt.epoch.attempt, cause, decision.restart);
      if (!decision.restart) {
        this.fail(new JobFailedError(`job '${this.cfg.name}' failed: ${decision.why}; last failure: ${cause}`, { cause: err }));
        return;
      }
      this.restarts++;
      this.restartTimesMs.push(this.env.clock.now());
      while (this.restartTimesMs.length > restartTimesToKeep(this.cfg.restartStrategy)) this.restartTimesMs.shift();
      const next = new JobAttempt(epochOf(this.leaderEpoch, attempt.epoch.attempt + 1));
      this.current = next;
      this.emit({ type: 'restarting', attempt: next.epoch.attempt, delayMs: decision.delayMs, cause, error: err });
      this.env.scheduler.schedule(decision.delayMs, () => void this.runAttempt(next));
    });
  }

  private recordFailure(attempt: number, cause: string, restarted: boolean): void {
    this.failures.push({ atMs: this.env.clock.wallNow(), attempt, message: cause, restarted });
    if (this.failures.length > EXCEPTIONS_KEPT) this.failures.shift();
  }

  /** Drops traces of checkpoints that are neither retained, in progress, nor among the newest failed. */
  private pruneTraces(): void {
    const keep = new Set<number>(this.coordinator.store.all().map((c) => c.checkpointId));
    for (const s of this.coordinator.history) if (s.status === 'IN_PROGRESS') keep.add(s.checkpointId);
    const failed = new Set<number>(this.coordinator.history.filter((s) => s.status === 'FAILED').map((s) => s.checkpointId));
    this.traces.prune(keep, (id) => failed.has(id));
  }

  /** Ends the current attempt (if it has not ended yet) and tears its deployment down; its figures move to the totals. */
  private teardown(): Promise<void> {
    return this.endAttempt(false);
  }

  /** `keep`: the job finished, the attempt's figures stay readable (and are not added to the totals twice). */
  private endAttempt(keep: boolean): Promise<void> {
    const attempt = this.current;
    if (attempt === null || !attempt.endable) return Promise.resolve();
    const deployment = attempt.end(keep);
    const stopped = deployment?.teardown() ?? Promise.resolve();
    if (deployment !== null && !keep) this.recordTotals.retire(deployment.tasks, stopped);
    void stopped.then(() => attempt.stopped());
    return stopped;
  }

  private fail(error: Error): void {
    if (this.isTerminal()) return;
    this.moveStatus('fail');
    this.endedAt = this.env.clock.wallNow();
    const stopped = this.teardown();
    void Promise.all([this.coordinator.shutdown(true), stopped]).finally(() => {
      this.deployer.dispose?.();
      this.emit({ type: 'failed', error });
      this.settle.reject(error);
    });
  }

  private resultOf(status: 'FINISHED' | 'CANCELED'): JobResult {
    return {
      jobId: this.cfg.jobId,
      status,
      restarts: this.restarts,
      checkpoints: [...this.coordinator.history],
      lastCheckpointLocation: this.coordinator.store.latest()?.location ?? null,
    };
  }

  // ---- messages from tasks ----

  private gateway(attempt: JobAttempt): TaskGateway {
    // A message a subtask sent before its attempt was torn down may arrive after: it is dropped,
    // and counted when a newer attempt is on by then.
    const send = (kind: Parameters<Rpc['send']>[0], fn: () => void) =>
      this.rpc.send(kind, () => {
        if (attempt !== this.current) this.staleControl++;
        else if (attempt.live && !this.isTerminal()) fn();
      });
    return {
      acknowledgeCheckpoint: (ack) =>
        send('ack', () => {
          this.traces.acknowledged(ack, preciseWallNow(this.env.clock));
          // The per-channel figures stay in the (few) traces, not in the coordinator's history of 100:
          // at parallelism 128 all-to-all they are 16,384 numbers per checkpoint.
          this.coordinator.receiveAck({ ...ack, metrics: { ...ack.metrics, barrierArrivalsMs: [], buffersAhead: [] } });
        }),
      declineCheckpoint: (task, id, reason, cause) => send('decline', () => this.coordinator.receiveDecline(task, id, reason, cause)),
      reachedEndOfData: (task) =>
        send('task-event', () => {
          attempt.endedData.add(taskKey(task));
          if (attempt.endedData.size === attempt.tasks.length) this.coordinator.allReachedEndOfData();
        }),
      taskFinished: (task) =>
        send('task-event', () => {
          attempt.finished.add(taskKey(task));
          if (attempt.finished.size === attempt.tasks.length) void this.finish();
        }),
      taskFailed: (task, error) => send('task-event', () => this.onAttemptFailure(attempt, withTask(task, attempt.deployment, error))),
    };
  }

  /**
   * Subtasks finish only after hearing that the final checkpoint completed; should that message be
   * lost, they would wait forever. Repeat it until the attempt ends (duplicates are harmless).
   */
  private resendFinalNotification(id: CheckpointId, attempt: JobAttempt | null): void {
    this.env.scheduler.schedule(FINAL_NOTIFY_RESEND_MS, () => {
      if (this.status !== 'RUNNING' || attempt === null || this.current !== attempt) return;
      for (const task of attempt.tasks) {
        if (task.status === 'RUNNING') this.rpc.send('notify-complete', () => task.notifyCheckpointComplete(id));
      }
      this.resendFinalNotification(id, attempt);
    });
  }

  private async finish(): Promise<void> {
    if (this.isTerminal()) return;
    this.moveStatus('finish');
    this.endedAt = this.env.clock.wallNow();
    void this.endAttempt(true); // every subtask finished; task managers, if any, end (their figures stay for metrics())
    this.deployer.dispose?.();
    const result = this.resultOf('FINISHED');
    await this.coordinator.shutdown(this.cfg.checkpointing.retainOnCancel);
    this.emit({ type: 'finished' });
    this.settle.resolve(result);
  }

  private coordinatorContext() {
    return {
      allTasksRunning: () => this.status === 'RUNNING' && this.current !== null && this.current.isIn('running'),
      expectedTasks: (): TaskId[] => this.tasks.map((t) => t.id),
      operators: (): OperatorInfo[] =>
        this.cfg.graph.vertices.flatMap((v) =>
          v.chain.map((n) => ({ uid: n.uid, name: n.name, parallelism: v.parallelism, maxParallelism: v.maxParallelism })),
        ),
      triggerSources: (barrier: Parameters<TaskHandle['triggerCheckpoint']>[0]) => {
        this.traces.triggered(barrier, this.attemptNumber, preciseWallNow(this.env.clock));
        for (const task of this.tasks) {
          if (!task.isSourceTask) continue;
          const target = `${this.attemptNumber}/${task.id.vertex}/${task.id.subtask}`;
          this.rpc.send('trigger', () => task.triggerCheckpoint(barrier), { checkpointId: barrier.checkpointId, target });
        }
      },
      notifyComplete: (id: CheckpointId) => {
        const stats = this.coordinator.history.find((s) => s.checkpointId === id) ?? null;
        if (stats) {
          this.lastCheckpoint = stats;
          this.emit({ type: 'checkpoint-completed', stats });
        }
        this.traces.notified(id, preciseWallNow(this.env.clock));
        this.pruneTraces();
        for (const task of this.tasks) this.rpc.send('notify-complete', () => task.notifyCheckpointComplete(id));
        if (stats?.isFinal) this.resendFinalNotification(id, this.current);
      },
      notifyAborted: (id: CheckpointId) => {
        const stats = this.coordinator.history.find((s) => s.checkpointId === id);
        if (stats) this.emit({ type: 'checkpoint-failed', stats });
        this.traces.failed(id, preciseWallNow(this.env.clock));
        this.pruneTraces();
        for (const task of this.tasks) this.rpc.send('notify-aborted', () => task.notifyCheckpointAborted(id));
      },
      failJob: (error: Error) => this.onAttemptFailure(this.current, error),
      log: (message: string) => this.emit({ type: 'log', message }),
      ...(this.cfg.publishCompleted === undefined ? {} : { publishCompleted: this.cfg.publishCompleted }),
    };
  }
}

const FINAL_NOTIFY_RESEND_MS = 200;

/** Eight base-36 characters from the random seam (about 41 bits). */
function randomTag(random: Environment['random']): string {
  return (random.int(0x100000) * 0x200000 + random.int(0x200000)).toString(36).padStart(8, '0');
}

/** The two-phase-commit sinks of a job graph with their uids. */
function twoPhaseSinksOf(graph: JobGraph): Array<{ uid: string; name: string; sink: TwoPhaseCommitSink<unknown, unknown> }> {
  const out: Array<{ uid: string; name: string; sink: TwoPhaseCommitSink<unknown, unknown> }> = [];
  for (const v of graph.vertices) {
    for (const node of v.chain) if (node.sink?.kind === 'two-phase-commit') out.push({ uid: node.uid, name: node.name, sink: node.sink });
  }
  return out;
}

function withTask(task: TaskId, deployment: AttemptDeployment | null, error: unknown): Error {
  const name = deployment?.tasks.find((t) => t.id.vertex === task.vertex && t.id.subtask === task.subtask)?.name ?? `vertex ${task.vertex}`;
  const message = `subtask ${task.subtask} of '${name}': ${errorMessage(error)}`;
  return error instanceof WeirError ? new WeirError(error.code, message, { cause: error }) : new Error(message, { cause: error });
}

export type { CheckpointMetadata };
