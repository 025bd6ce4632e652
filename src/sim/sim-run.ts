/**
 * Runs one seed's job in the simulated world as one simulated process after another. Faults start
 * once the job runs and stop after enough checkpoints completed. A process kill drops the process
 * with everything in its memory; the next process resumes from the job's checkpoint directory as
 * `weir run --from <job dir>` does, knowing only the disk and the sinks' external side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobClient, StreamEnvironment } from '../api/environment.ts';
import type { JobMaster } from '../cluster/job-master/job-master.ts';
import type { JobEvent, JobResult } from '../cluster/job-master/job-events.ts';
import { yieldToEventLoop } from '../core/adapters.ts';
import { errorMessage, InjectedFault } from '../core/errors.ts';
import { type CheckpointId, checkpointId as toCheckpointId, jobId } from '../core/ids.ts';
import { readMetadataAt } from '../checkpoint/metadata/read.ts';
import { filePathsOf } from '../checkpoint/metadata/walk.ts';
import { MemoryCheckpointStorage } from '../storage/memory-storage.ts';
import { memoryStoreUrl, openMemoryStore } from '../storage/memory-stores.ts';
import { baseName, checkpointDir, memoryJobDir, metadataPath, parseSavepointDirName } from '../storage/paths.ts';
import { BarrierOrder } from './checkers/barrier-order.ts';
import { checkCommits } from './checkers/commit-once.ts';
import { openWindows } from './checkers/open-windows.ts';
import { checkSequences } from './checkers/per-key-sequence.ts';
import { checkSnapshot } from './checkers/snapshot-consistency.ts';
import { checkStorage } from './checkers/storage.ts';
import { completedOnDisk, corruptAtRest, newestDurableId, newestSavepoint } from './world/corruption.ts';
import { ChangelogBackends } from './world/changelog-backends.ts';
import type { StateBackendFactory } from '../state/backend.ts';
import { DelayedSnapshots, type PinnedWrites } from './world/delayed-snapshots.ts';
import { describeEvent, isExpectedFailure } from './world/events.ts';
import { FaultyStorage, type StorageKillSite } from './world/faulty-storage.ts';
import { guarantee, type KillPlan, type SeedKnobs } from './knobs.ts';
import { RandomFaults } from './world/random-faults.ts';
import { ScenarioSinks, SequenceLog, type BuiltScenario, type JobVariant, type ProcessShared } from './scenarios/scenarios.ts';
import { buildJob, buildScenarioJob, environmentFor, type SimJob } from './scenarios/sim-job.ts';
import { SimProcess } from './world/sim-process.ts';
import { SimRpc } from './world/sim-rpc.ts';
import { SimWorld } from './world/sim-world.ts';
import { SimTaskManagerFaults, type LinkFault } from './world/task-manager-faults.ts';
import { elect, type Leadership } from '../cluster/ha/leadership.ts';
import { MemoryHaStore } from '../cluster/ha/memory-ha-store.ts';

const MAX_STEPS = 3_000_000;
const MAX_VIRTUAL_MS = 120_000;
/** Kills per seed at most, so the job always gets to finish. */
const MAX_KILLS = 6;
/** Checkpoints with in-flight data after which the job is made to restore, per seed. */
const AFTER_INFLIGHT_MAX = 3;
const JOB_ID = jobId('sim');
const JOB_DIR = memoryJobDir(JOB_ID);
/** Steps of 2 virtual ms a leader's pause waits for no checkpoint to be pending before it gives up. */
const PAUSE_TRIES = 100;
const SAVEPOINT_ROOT = 'memory:savepoints';
const STOP_TRIES = 5;
const STOP_RETRY_MS = 10;
const NO_STORAGE_FAULTS = { writeFailProbability: 0, tornWriteProbability: 0, renameFailProbability: 0, latencyMsMax: 2 };
const NO_RPC_FAULTS = { delayProbability: 0, delayMsMax: 0, lossProbability: 0 };

/** How often the seed reached each recovery path. */
export interface RecoveryCounts {
  restoresFromCheckpoint: number;
  restoresWithInflight: number;
  /** Completed aligned-timeout checkpoints that switched to unaligned and persisted data behind the barrier. */
  timeoutSwitchesWithData: number;
  /** Completed checkpoints that persisted in-flight data. */
  inflightCheckpoints: number;
  kills: number;
  corruptions: number;
  fallbacks: number;
  /** Sinks that rolled back committed output of checkpoints newer than the one restored. */
  rollbacks: number;
  rescales: number;
  changedJobResumes: number;
  /** Savepoints resumed from that held open windows (window contents of some key). */
  savepointsWithOpenWindows: number;
  /** Savepoints resumed from that held pending window timers. */
  savepointsWithWindowTimers: number;
  /** Checkpoints aborted on the embedded incremental backend with two allowed at once. */
  incrementalConcurrentAborts: number;
  /** Complete checkpoints a killed process retained and no later process claimed: left on the disk. */
  abandonedCheckpoints: number;
  /** Window scenarios: (re)starts whose timed split waited for its barrier of a checkpoint the idle partition took before it went idle. */
  windowStartsHeld: number;
  /** Split-source scenario: attempts that restored a lane at its end, waiting for the idle split read to its end (SplitLogs.restoresWithLaneAtEnd). */
  splitLanesRestoredAtEnd: number;
  /** Split-source scenario: attempts whose idle split's end waited for a lane end fetched but not yet checkpointed (SplitLogs.idleEndsHeld). */
  splitIdleEndsHeld: number;
  /** Teardowns the cancellation watchdog ended (a task manager stuck in user code on cancel never answered). */
  watchdogTerminations: number;
  /** Frames and credits of an earlier attempt that reached a reused task manager (and were dropped). */
  staleDataMessages: number;
  /** Control messages of another epoch (an attempt torn down) that reached a task manager or the job master (and were dropped). */
  staleControlMessages: number;
  /** Recoveries that committed two or more restored transactions of one pre-committing sink subtask for the first time (their order shows). */
  orderedRecoveryCommits: number;
  /** Checkpoint triggers that reached a source subtask after the trigger of a newer checkpoint (delayed on the way). */
  staleTriggers: number;
  /** Changelog seeds: restores from a checkpoint (materialization + replay of the log), log truncations by an adopted materialization, upload attempts retried. */
  changelogReplayRestores: number;
  changelogTruncations: number;
  changelogUploadRetries: number;
  /** Process kills that landed while a changelog materialization was under way (its files half written, never adopted). */
  changelogKillsDuringMaterialization: number;
  /** Keyed state overwritten, and deleted, while a snapshot of its backend had not finished its async part. */
  pinnedOverwrites: number;
  pinnedDeletions: number;
  /** Stop-with-savepoint requests that failed (the job went on and the user tried again). */
  stopFailures: number;
  /** Final checkpoints (end of input) that completed while a stop-with-savepoint was outstanding. */
  finalCheckpointsDuringStop: number;
  /** Processes that restored a checkpoint an earlier process had restored already (resumed twice from it). */
  sameCheckpointResumes: number;
  /** Processes killed while deleting their checkpoints after the job's final one. */
  deathsShuttingDown: number;
  /** In-memory task managers that died silently (the job master found them by missed heartbeats). */
  taskManagerDeaths: number;
  /** Of those, task managers found dead before their first answer to a deploy (by heartbeat.startTimeoutMs). */
  deathsBeforeHello: number;
  /** In-memory task managers whose process exited: the job master and their peers learned it at once from the closed connections. */
  taskManagerExits: number;
  /** Control connections of in-memory task managers that dropped (the job master and the task manager learned it). */
  controlConnectionDrops: number;
  /**
   * Data connections between in-memory task managers that dropped (both learned it), and restarts
   * caused by a lost data connection (a subtask using it failed: one dropped, or a peer's process exited).
   */
  dataConnectionDrops: number;
  dataConnectionFailovers: number;
  /** Partitions of an in-memory task manager that healed, and partitioned task managers that learned at the heal that their job master had closed their connection (and stopped). */
  partitionsHealed: number;
  partitionsOutlived: number;
  /** Resumes of a killed run that passed over checkpoints an earlier run left in the job directory (older than the run's savepoint). */
  earlierRunCheckpointsPassed: number;
  /**
   * High availability: processes that took over from a dead leader (waited out its lease) and
   * restored the checkpoint the HA store's pointer named; of those, restores where a newer
   * checkpoint's `_metadata` was durable on disk but never published (killed between the two).
   */
  haTakeovers: number;
  haRestoresBehindDisk: number;
  /** Leaders that lost their lease while they ran (renewals too late) and stopped. */
  haDepositions: number;
  /** HA seeds that draw it: leaders paused (SIGSTOP) past their lease that woke while their successor ran, and of those the ones that found their leadership gone and stopped. */
  haStaleWakes: number;
  haStaleStopped: number;
  /** Commits a woken stale leader's writers repeated of transactions of published checkpoints its successor had committed (idempotent). */
  haStaleRepeats: number;
  /**
   * Object-store storage (knob faults.storage.objectStore): seeds that ran it; uploads lost or failed
   * (nothing landed); PUTs that landed after their request timed out, and of those the objects left
   * at the end (landed after their checkpoint was discarded: what a bucket lifecycle rule removes);
   * `_metadata` PUTs whose answer was lost, committed by the create-only retry finding its own bytes.
   */
  objectStoreSeeds: number;
  lostUploads: number;
  latePuts: number;
  lateOrphans: number;
  metadataAnswersLost: number;
}

export function noRecovery(): RecoveryCounts {
  return {
    restoresFromCheckpoint: 0,
    restoresWithInflight: 0,
    timeoutSwitchesWithData: 0,
    inflightCheckpoints: 0,
    kills: 0,
    corruptions: 0,
    fallbacks: 0,
    rollbacks: 0,
    rescales: 0,
    changedJobResumes: 0,
    savepointsWithOpenWindows: 0,
    savepointsWithWindowTimers: 0,
    incrementalConcurrentAborts: 0,
    abandonedCheckpoints: 0,
    windowStartsHeld: 0,
    splitLanesRestoredAtEnd: 0,
    splitIdleEndsHeld: 0,
    watchdogTerminations: 0,
    staleDataMessages: 0,
    staleControlMessages: 0,
    orderedRecoveryCommits: 0,
    staleTriggers: 0,
    changelogReplayRestores: 0,
    changelogKillsDuringMaterialization: 0,
    changelogTruncations: 0,
    changelogUploadRetries: 0,
    pinnedOverwrites: 0,
    pinnedDeletions: 0,
    stopFailures: 0,
    finalCheckpointsDuringStop: 0,
    sameCheckpointResumes: 0,
    deathsShuttingDown: 0,
    taskManagerDeaths: 0,
    deathsBeforeHello: 0,
    taskManagerExits: 0,
    controlConnectionDrops: 0,
    dataConnectionDrops: 0,
    dataConnectionFailovers: 0,
    partitionsHealed: 0,
    partitionsOutlived: 0,
    earlierRunCheckpointsPassed: 0,
    haTakeovers: 0,
    haRestoresBehindDisk: 0,
    haDepositions: 0,
    haStaleWakes: 0,
    haStaleStopped: 0,
    haStaleRepeats: 0,
    objectStoreSeeds: 0,
    lostUploads: 0,
    latePuts: 0,
    lateOrphans: 0,
    metadataAnswersLost: 0,
  };
}

export type Settled = { result: JobResult } | { error: unknown } | null;

/** What a run leaves for the checkers. */
export interface RunRecord {
  readonly settled: Settled;
  readonly committed: string[];
  readonly world: SimWorld;
  readonly problems: Map<string, string[]>;
  readonly unexpected: string[];
  readonly restarts: number;
  readonly checkpointsCompleted: number;
  readonly taskFaults: number;
  readonly storageFaults: number;
  readonly messagesLost: number;
  readonly recovery: RecoveryCounts;
}

/** One simulated process running the job. */
interface Proc {
  readonly process: SimProcess;
  readonly storage: FaultyStorage;
  readonly rpc: SimRpc;
  readonly parallelism: number;
  readonly variant: JobVariant;
  /** Kills still due right after this process runs (defect 1's shape: restore the same checkpoint again). */
  readonly again: { left: number; afterMs: number; downMs: number };
  /** The savepoint this run of the job started from, if any. */
  readonly startedFrom: string | null;
  /** Complete checkpoints this process knows of: on the disk when it started from the job dir, then those it completed. */
  readonly known: Set<number>;
  /** Whether a final checkpoint completed in this process (after it, the job only commits and shuts down). */
  finalCompleted: boolean;
  master: JobMaster | null;
  client: JobClient | null;
}

interface StartSpec {
  readonly parallelism: number;
  readonly variant: JobVariant;
  readonly restoreFrom?: string;
  readonly claim: boolean;
  readonly again: Proc['again'];
  readonly startedFrom: string | null;
}

export class SimRun {
  readonly world: SimWorld;
  private readonly files = new Map<string, Uint8Array>();
  private readonly sinkDir: string | null;
  private readonly sinks: ScenarioSinks;
  private readonly log = new SequenceLog();
  private readonly taskFaults: RandomFaults;
  private readonly tmFaults: SimTaskManagerFaults;
  private readonly procs: Proc[] = [];
  private current: Proc | null = null;
  private settled: Settled = null;
  private savepoint: string | null = null;
  private resumedFromSavepoint = false;
  private faultsActive = false;
  private faultsStarted = false;
  private readonly armed: Set<KillPlan>;
  private readonly counts = { completedInWindow: 0, uploads: 0, metadata: 0, restarts: 0, checkpoints: 0 };
  private readonly recovery = noRecovery();
  private readonly problems = new Map<string, string[]>();
  private readonly barrierOrder = new BarrierOrder();
  private readonly unexpected: string[] = [];
  private readonly snapshotChecks: Array<Promise<void>> = [];
  private readonly inflightIds = new Set<number>();
  private readonly corruptedDirs = new Set<string>();
  private readonly corruptedFiles = new Set<string>();
  /** The last process died while deleting its checkpoints after the job's final checkpoint. */
  private diedShuttingDown = false;
  /** Checkpoints a dead process retained that its successor did not restore (nor claim). */
  private readonly abandoned = new Set<string>();
  private readonly pinned: PinnedWrites[] = [];
  private readonly changelogs = new ChangelogBackends();
  /** A stop-with-savepoint request is outstanding. */
  private stopping = false;
  /** Checkpoints each process restored first, to count a second process restoring the same one. */
  private readonly restoredByProcesses = new Set<number>();
  /** The HA store job masters compete in (seeds with `k.ha`), or null. */
  private readonly ha: MemoryHaStore | null;
  private readonly firstRunning = new Set<Proc>();
  /** Leaders paused (SIGSTOP) and replaced: stale once they wake. */
  private readonly paused = new Set<Proc>();
  /** Their job masters' process tags: the run ids of their writers start with these. */
  private readonly staleTags = new Set<string>();
  /** State files written by paused leaders' storage after their pause. */
  private readonly writtenByStaleLeaders = new Set<string>();

  constructor(
    private readonly k: SeedKnobs,
    private readonly job: SimJob,
    private readonly withFaults: boolean,
    private readonly trace?: (line: string) => void,
  ) {
    this.world = new SimWorld(k.seed, { stepCostMsMax: k.stepCostMsMax, slowProbability: withFaults ? k.faults.slowProbability : 0, slowDelayMsMax: 3 });
    this.world.slowActive = false;
    this.sinkDir = job === 'file-sink' ? mkdtempSync(join(tmpdir(), 'weir-sim-')) : null;
    // With HA a checkpoint is complete once published: no sink may commit one whose pointer the store refused.
    this.sinks = new ScenarioSinks(this.sinkDir, () =>
      Math.min(newestDurableId(this.files, JOB_DIR, SAVEPOINT_ROOT), this.ha?.publishedMax('sim') ?? Infinity),
    );
    this.taskFaults = new RandomFaults(this.world.random, k.faults.task, k.faults.maxTaskFaults);
    this.taskFaults.active = false;
    this.tmFaults = new SimTaskManagerFaults(k.seed, k.faults.taskManagers);
    this.armed = new Set(withFaults ? k.kills : []);
    this.ha = k.ha === null ? null : new MemoryHaStore(this.world);
    this.sinks.ledger.isStaleRun = (runId) => [...this.staleTags].some((t) => runId.startsWith(t));
    this.changelogs.onMaterializationStart = () => this.onMaterializationStart();
  }

  /** Changelog seeds that draw it: the process is killed as the nth materialization within the fault window starts. */
  private materializationsInWindow = 0;
  private onMaterializationStart(): void {
    const nth = this.k.backend.changelog?.killAtMaterialization ?? null;
    if (nth === null || !this.withFaults || !this.faultsActive || ++this.materializationsInWindow !== nth) return;
    const proc = this.current;
    // The next step: the materialization's sync part is done, its files are being written.
    if (proc !== null)
      this.world.schedule(0, () => this.kill(proc, `as materialization ${nth} of the fault window started`, { left: 0, afterMs: 0, downMs: 1 }));
  }

  async run(): Promise<RunRecord> {
    try {
      await this.start({ parallelism: this.k.parallelism, variant: 'original', claim: false, again: { left: 0, afterMs: 0, downMs: 0 }, startedFrom: null });
      await this.drive();
      await Promise.all(this.snapshotChecks);
      return await this.record();
    } finally {
      if (this.sinkDir) rmSync(this.sinkDir, { recursive: true, force: true });
    }
  }

  private async drive(): Promise<void> {
    const w = this.world;
    while (w.steps < MAX_STEPS && w.now() < MAX_VIRTUAL_MS) {
      if (this.settled !== null) {
        if (!('result' in this.settled) || this.savepoint === null || this.resumedFromSavepoint) return;
        this.resumeFromSavepoint(this.savepoint);
        await this.countOpenWindows(this.savepoint);
        await this.start({
          parallelism: this.k.rescale!.to,
          variant: this.k.rescale!.changeJob ? 'changed' : 'original',
          restoreFrom: this.savepoint,
          claim: false,
          again: { left: 0, afterMs: 0, downMs: 0 },
          startedFrom: this.savepoint,
        });
        continue;
      }
      if (!w.step()) {
        await yieldToEventLoop();
        if (w.idle && this.settled === null) return;
        continue;
      }
      await yieldToEventLoop();
    }
  }

  private resumeFromSavepoint(location: string): void {
    this.resumedFromSavepoint = true;
    this.settled = null;
    if (this.k.rescale!.to !== this.k.parallelism) this.recovery.rescales++;
    if (this.k.rescale!.changeJob) this.recovery.changedJobResumes++;
    this.trace?.(`${this.world.now().toFixed(1)}ms resuming from savepoint ${location}`);
  }

  private async countOpenWindows(location: string): Promise<void> {
    const disk = new MemoryCheckpointStorage(JOB_ID, { files: this.files });
    const meta = await readMetadataAt(disk, location).catch(() => null);
    if (meta === null) return;
    const open = await openWindows(meta, (h) => disk.readState(h));
    if (open.keysWithContents > 0) this.recovery.savepointsWithOpenWindows++;
    if (open.keysWithTimers > 0) this.recovery.savepointsWithWindowTimers++;
  }

  /** Starts a new process running the job; it knows only what `spec` and the disk tell it. */
  private async start(spec: StartSpec): Promise<void> {
    const process = new SimProcess(this.world, this.procs.length + 1);
    const storage = new FaultyStorage(JOB_ID, process, this.world.random, this.withFaults ? this.k.faults.storage : NO_STORAGE_FAULTS, this.files);
    const rpc = new SimRpc(process, this.world.random, this.withFaults ? this.k.faults.rpc : NO_RPC_FAULTS);
    storage.active = rpc.active = this.faultsActive;
    storage.network = this.world;
    const known = new Set<number>(spec.restoreFrom === JOB_DIR ? this.completedByRun(spec.startedFrom) : []);
    const proc: Proc = {
      process,
      storage,
      rpc,
      parallelism: spec.parallelism,
      variant: spec.variant,
      again: spec.again,
      startedFrom: spec.startedFrom,
      known,
      finalCompleted: false,
      master: null,
      client: null,
    };
    this.procs.push(proc);
    this.current = proc;
    storage.kill = (site) => this.storageKill(proc, site);
    const led = await this.lead(proc, spec);
    if (led === null) return;
    const { leadership, restoreFrom } = led;
    this.trace?.(
      `${this.world.now().toFixed(1)}ms process ${process.pid} starts${restoreFrom ? ` from ${restoreFrom}` : ''} at parallelism ${spec.parallelism}${this.k.taskManagers > 1 ? ` on ${this.k.taskManagers} task managers` : ''}${spec.variant === 'changed' ? ' (changed job)' : ''}`,
    );
    try {
      const env = environmentFor(this.k, this.job, spec.parallelism);
      const shared: ProcessShared = {};
      const scenario = await buildJob(this.job, env, { k: this.k, log: this.log, sinks: this.sinks, variant: spec.variant, scheduler: process, shared });
      const client = await env.executeAsync('sim', {
        env: process.environment,
        faults: this.barrierOrder.observe(process.pid, this.taskFaults),
        rpc,
        storage,
        restoreFrom,
        claim: spec.claim && restoreFrom !== undefined,
        ...(leadership === null
          ? {}
          : { leadership: { epoch: leadership.epoch, publish: (id: number, location: string) => leadership.publish(id, location) } }),
        allowNonRestoredState: spec.variant === 'changed',
        elementsPerStep: this.k.elementsPerStep,
        sourceBatchRecords: this.k.sourceBatchRecords,
        ...(this.k.taskManagers > 1
          ? {
              inMemoryTaskManagers: this.k.taskManagers,
              ...(this.withFaults ? { taskManagerFaults: this.tmFaults } : {}),
              // Each task manager builds the job again (the scenario or the user's module) and opens
              // its own client of the seed's disk, with this process's storage faults.
              taskManagerJob: (tmEnv: StreamEnvironment) => this.buildForTaskManager(tmEnv, spec.variant, process, shared),
              taskManagerStorage: { url: memoryStoreUrl(storage.inner), open: (url: string) => storage.client(openMemoryStore(url)) },
            }
          : {}),
        wrapBackends: (b: StateBackendFactory) => this.changelogs.wrap(this.k.asyncStartDelayMsMax > 0 ? this.delayedSnapshots(process).wrap(b) : b),
        onJobMaster: (m: JobMaster) => {
          proc.master = m;
          storage.retained = () => new Set(m.checkpointCoordinator.store.all().map((c) => c.checkpointId));
          storage.retainedLocations = () => new Set(m.checkpointCoordinator.store.all().map((c) => c.location));
        },
        onEvent: (e) => this.onEvent(proc, scenario, e),
      });
      proc.client = client;
      client.result.then(
        (result) => this.current === proc && (this.settled = { result }),
        (error: unknown) => this.current === proc && (this.settled = { error }),
      );
    } catch (error) {
      if (this.current === proc) this.settled = { error };
    }
  }

  private onEvent(proc: Proc, scenario: BuiltScenario, e: JobEvent): void {
    if (!proc.process.isAlive) return;
    this.trace?.(`${this.world.now().toFixed(1)}ms [p${proc.process.pid}] ${describeEvent(e)}`);
    switch (e.type) {
      case 'running':
        this.onRunning(proc, e.restoredFrom);
        return;
      case 'restarting':
        this.counts.restarts++;
        if (!isExpectedFailure(e.error) && !this.tmFaults.explains(e.error))
          this.unexpected.push(`restart caused by an error no fault explains: ${errorMessage(e.error)}`);
        if (e.cause.includes('data connection to task manager')) this.recovery.dataConnectionFailovers++;
        if (e.cause.includes('no hello within')) this.recovery.deathsBeforeHello++;
        return;
      case 'restore-fallback':
        this.recovery.fallbacks++;
        return;
      case 'sink-rolled-back':
        this.recovery.rollbacks++;
        return;
      case 'checkpoint-failed':
        // The shared-state registry must never delete a file a later checkpoint still reuses: a storage violation.
        if (e.stats.failureReason === 'SHARED_FILE_DELETED')
          this.add('storage', [e.stats.failureMessage ?? `checkpoint ${e.stats.checkpointId} reused a deleted shared file`]);
        if (this.k.backend.kind === 'embedded-incremental' && this.k.checkpointing.maxConcurrent > 1) this.recovery.incrementalConcurrentAborts++;
        return;
      case 'checkpoint-completed':
        this.onCompleted(proc, scenario, e.stats);
        return;
      case 'log':
        if (e.message.includes('within cancellationTimeoutMs')) this.recovery.watchdogTerminations++;
        return;
      default:
        return;
    }
  }

  private onRunning(proc: Proc, restoredFrom: number | null): void {
    if (this.withFaults && !this.faultsStarted) this.startFaults();
    if (restoredFrom !== null && !this.firstRunning.has(proc)) {
      if (this.restoredByProcesses.has(restoredFrom)) this.recovery.sameCheckpointResumes++;
      this.restoredByProcesses.add(restoredFrom);
    }
    this.firstRunning.add(proc);
    this.checkRestoredNewest(proc, restoredFrom);
    if (restoredFrom !== null && !this.isSavepointRestore(restoredFrom)) {
      this.recovery.restoresFromCheckpoint++;
      if (this.k.backend.changelog !== undefined) this.recovery.changelogReplayRestores++;
      if (this.inflightIds.has(restoredFrom)) this.recovery.restoresWithInflight++;
    }
    const again = proc.again;
    if (again.left > 0) {
      this.world.schedule(again.afterMs, () =>
        this.kill(proc, 'again before a new checkpoint', { left: again.left - 1, afterMs: again.afterMs, downMs: again.downMs }),
      );
    }
  }

  /** Checker (f): recovery restores the newest completed checkpoint that verifies (one corrupted at rest does not). */
  private checkRestoredNewest(proc: Proc, restoredFrom: number | null): void {
    const verifying = [...proc.known].filter((id) => !this.corruptedDirs.has(checkpointDir(JOB_DIR, toCheckpointId(id))));
    if (verifying.length === 0) return;
    const newest = Math.max(...verifying);
    if (restoredFrom === null || restoredFrom < newest) {
      this.add('restore-newest', [
        `process ${proc.process.pid} restored ${restoredFrom === null ? 'nothing' : `checkpoint ${restoredFrom}`} although checkpoint ${newest} completed and verifies`,
      ]);
    }
  }

  private isSavepointRestore(restoredFrom: number): boolean {
    const sp = this.savepoint === null ? null : parseSavepointDirName(baseName(this.savepoint));
    return this.resumedFromSavepoint && sp?.checkpointId === restoredFrom;
  }

  private onCompleted(proc: Proc, scenario: BuiltScenario, stats: Extract<JobEvent, { type: 'checkpoint-completed' }>['stats']): void {
    this.counts.checkpoints++;
    if (stats.kind === 'checkpoint') proc.known.add(stats.checkpointId);
    if (stats.isFinal && stats.kind === 'checkpoint') proc.finalCompleted = true;
    if (stats.isFinal && this.stopping) this.recovery.finalCheckpointsDuringStop++;
    const inflight = stats.subtasks.some((st) => st.metrics.channelStateBytes > 0);
    if (inflight) {
      this.inflightIds.add(stats.checkpointId);
      this.recovery.inflightCheckpoints++;
      if (this.k.mode === 'aligned-timeout') this.recovery.timeoutSwitchesWithData++;
      if (this.withFaults && this.k.afterInflight !== null && this.inflightIds.size <= AFTER_INFLIGHT_MAX) this.failAfterInflight(proc, stats.checkpointId);
    }
    if (stats.location) this.checkSnapshotAt(proc, scenario, stats.location);
    if (this.faultsActive && ++this.counts.completedInWindow >= this.k.faults.untilCheckpoints) this.setFaults(false);
    for (const plan of this.armed) {
      if (plan.point.at === 'checkpoint-complete' && plan.point.nth === this.counts.completedInWindow)
        this.killBy(proc, plan, `as checkpoint ${stats.checkpointId} completed, before its commits`);
    }
  }

  /** Makes the job restore the checkpoint that just completed with in-flight data (after its notifications go out). */
  private failAfterInflight(proc: Proc, id: number): void {
    this.world.schedule(0, () => {
      if (this.k.afterInflight === 'kill') this.kill(proc, `after checkpoint ${id} with in-flight data completed`, { left: 0, afterMs: 0, downMs: 1 }, true);
      else if (proc === this.current) proc.master?.failGlobal(new InjectedFault(`restart after checkpoint ${id} with in-flight data`));
    });
  }

  private checkSnapshotAt(proc: Proc, scenario: BuiltScenario, location: string): void {
    const inner = proc.storage.inner;
    this.snapshotChecks.push(
      readMetadataAt(inner, location)
        .then((meta) => checkSnapshot(meta, scenario, guarantee(this.k.mode), (h) => inner.readState(h)))
        .then((msgs) => this.add('snapshot-consistency', msgs))
        .catch((err: unknown) => {
          if (!this.corruptedDirs.has(location)) this.add('snapshot-consistency', [`could not read checkpoint at ${location}: ${errorMessage(err)}`]);
        }),
    );
  }

  // ---- faults ----

  private startFaults(): void {
    this.faultsStarted = true;
    this.setFaults(true);
    const w = this.world;
    w.schedule(this.k.faults.maxWindowMs, () => this.setFaults(false));
    for (const at of this.k.restartsAtMs)
      w.schedule(at, () => this.faultsActive && this.current?.master?.failGlobal(new InjectedFault('coordinator restarts the job')));
    for (const at of this.k.faults.taskManagers.deathsAtMs) w.schedule(at, () => this.killTaskManager());
    for (const fault of this.k.faults.taskManagers.links) w.schedule(fault.atMs, () => this.strikeLink(fault));
    for (const plan of this.armed)
      if (plan.point.at === 'time') w.schedule(plan.point.afterMs, () => this.current && this.killBy(this.current, plan, 'at a drawn moment'));
    if (this.k.corruption) w.schedule(this.k.corruption.afterMs, () => void this.tryCorrupt());
    const pause = this.k.ha?.pause ?? null;
    if (pause !== null) w.schedule(pause.afterMs, () => this.pauseLeader(pause.forMs, PAUSE_TRIES));
    if (this.k.rescale) w.schedule(this.k.rescale.atMs, () => this.stopWithSavepoint(STOP_TRIES));
  }

  /** What an in-memory task manager runs to build the job: the scenario again (at once), or the user's module. */
  private buildForTaskManager(env: StreamEnvironment, variant: JobVariant, process: SimProcess, shared: ProcessShared): void | Promise<void> {
    const b = { k: this.k, log: this.log, sinks: this.sinks, variant, scheduler: process, shared };
    if (typeof this.job === 'string') buildScenarioJob(this.job, env, b);
    else return buildJob(this.job, env, b).then(() => {});
  }

  /** One task manager of the running attempt dies silently; nothing tells the job master. */
  private killTaskManager(): void {
    if (!this.faultsActive) return;
    const index = this.tmFaults.killOne();
    if (index !== null) this.trace?.(`${this.world.now().toFixed(1)}ms task manager ${index} died silently`);
  }

  /** A connection of the running attempt's task managers drops, one is cut off, or one's process exits. */
  private strikeLink(fault: LinkFault): void {
    if (!this.faultsActive) return;
    const what = this.tmFaults.strike(fault);
    if (what !== null) this.trace?.(`${this.world.now().toFixed(1)}ms ${what}`);
  }

  /** The user stops the job with a savepoint; when a fault makes the stop fail, the job goes on and the user tries again. */
  private stopWithSavepoint(tries: number): void {
    const client = this.current?.client;
    if (!client || tries === 0 || this.resumedFromSavepoint) return;
    this.stopping = true;
    client.stopWithSavepoint(SAVEPOINT_ROOT).then(
      (location) => {
        this.stopping = false;
        this.savepoint = location;
      },
      () => {
        this.stopping = false;
        this.recovery.stopFailures++;
        this.world.schedule(STOP_RETRY_MS, () => this.stopWithSavepoint(tries - 1));
      },
    );
  }

  private setFaults(on: boolean): void {
    this.faultsActive = on;
    this.taskFaults.active = on;
    this.tmFaults.active = on;
    this.world.slowActive = on;
    for (const p of this.procs) p.storage.active = p.rpc.active = on;
  }

  private async tryCorrupt(): Promise<void> {
    if (!this.faultsActive) return;
    const plan = this.k.corruption!;
    const onDisk = completedOnDisk(this.files, JOB_DIR);
    if (onDisk.length < 2) {
      this.world.schedule(5, () => void this.tryCorrupt());
      return;
    }
    // What the checkpoint refers to stays as it is (for inspection), so the leftover check keeps it.
    const meta = await readMetadataAt(new MemoryCheckpointStorage(JOB_ID, { files: this.files }), checkpointDir(JOB_DIR, onDisk[onDisk.length - 1]!));
    const hit = corruptAtRest(this.files, JOB_DIR, plan, (n) => this.world.random.int(n))!;
    for (const f of [...filePathsOf(meta), metadataPath(hit.dir)]) this.corruptedFiles.add(f);
    this.recovery.corruptions++;
    this.corruptedDirs.add(hit.dir);
    this.trace?.(`${this.world.now().toFixed(1)}ms corrupted ${hit.file} (${plan.how}) at rest`);
    const proc = this.current;
    if (proc === null) return;
    if (plan.followedBy === 'kill') this.kill(proc, 'after corruption at rest', { left: 0, afterMs: 0, downMs: 1 });
    else proc.master?.failGlobal(new InjectedFault('restart after corruption at rest'));
  }

  /**
   * HA: the leader stops running (SIGSTOP) at a moment none of its checkpoints is pending (a
   * paused leader's half-written checkpoint would share ids with its successor's in the one job
   * directory the simulator keeps, where real leaders each write their own); a standby takes over
   * once the lease runs out, and `forMs` later the old leader wakes while its successor runs.
   */
  private pauseLeader(forMs: number, tries: number): void {
    const proc = this.current;
    if (proc === null || !this.faultsActive || !proc.process.isAlive || this.settled !== null || proc.master === null || tries === 0) return;
    if (proc.master.checkpointCoordinator.numPending > 0) {
      this.world.schedule(2, () => this.pauseLeader(forMs, tries - 1));
      return;
    }
    proc.process.pause();
    this.paused.add(proc);
    this.staleTags.add(`${proc.master.processTag}-a`);
    // What it writes from now on (completions it held, once it wakes) lands, for a real leader, in
    // its own job directory: not the successor's to clean, so not checker (d)'s leftovers either.
    proc.storage.onFileWritten = (path) => this.writtenByStaleLeaders.add(path);
    this.current = null;
    this.trace?.(`${this.world.now().toFixed(1)}ms process ${proc.process.pid} (the leader) paused for ${forMs}ms`);
    this.world.schedule(1, () => void this.resumeAfterKill(proc, { left: 0, afterMs: 0, downMs: 0 }));
    this.world.schedule(forMs, () => {
      if (!proc.process.isAlive) return;
      this.recovery.haStaleWakes++;
      this.trace?.(`${this.world.now().toFixed(1)}ms stale process ${proc.process.pid} wakes`);
      proc.process.resume();
    });
  }

  private storageKill(proc: Proc, site: StorageKillSite): boolean {
    if (!this.faultsActive || proc !== this.current) return false;
    if (site === 'upload') this.counts.uploads++;
    if (site === 'metadata-before') this.counts.metadata++;
    for (const plan of this.armed) {
      const p = plan.point;
      const due =
        (p.at === 'upload' && site === 'upload' && p.nth === this.counts.uploads) ||
        (p.at === 'metadata' && p.nth === this.counts.metadata && site === (p.durable ? 'metadata-after' : 'metadata-before'));
      if (due) return this.killBy(proc, plan, site === 'upload' ? 'during a state upload' : `while writing _metadata (${site})`);
    }
    return false;
  }

  /**
   * High availability (seeds with `k.ha`): the process waits until it holds the job's lease (a dead
   * leader's runs out on the virtual clock), then restores what the store's pointer names instead
   * of the newest checkpoint on the disk; checkpoints durable there but never published are left
   * unowned. Without HA: the spec as it is. Null when the process died while it waited.
   */
  private async lead(proc: Proc, spec: StartSpec): Promise<{ leadership: Leadership | null; restoreFrom: string | undefined } | null> {
    const store = this.ha;
    if (store === null || this.k.ha === null) return { leadership: null, restoreFrom: spec.restoreFrom };
    const { process } = proc;
    const elected = await elect(store, { job: 'sim', holder: `process ${process.pid}`, leaseMs: this.k.ha.leaseMs, address: null }, process.environment, (l) =>
      this.trace?.(`${this.world.now().toFixed(1)}ms process ${process.pid} waits: ${l.holder} holds the lease (epoch ${l.epoch})`),
    );
    if (elected === 'ended' || !process.isAlive) return null;
    elected.onLost((error) => {
      // A leader whose lease ran out (its renewals came too late) stops at once, as `weir run --ha`
      // does (process.exit); a standby takes over.
      if (this.paused.has(proc) && process.isAlive) {
        // A stale leader woke: it must find its leadership gone before it commits anything, and
        // ends as `weir run --ha` does (process.exit); the checkers see whether anything of it committed.
        this.trace?.(`${this.world.now().toFixed(1)}ms stale process ${process.pid} woke and stops: ${error.message}`);
        this.recovery.haStaleStopped++;
        process.kill();
        proc.master?.abandonAttempt();
        return;
      }
      if (proc !== this.current || !process.isAlive || this.settled !== null) return;
      this.trace?.(`${this.world.now().toFixed(1)}ms process ${process.pid}: ${error.message}`);
      this.recovery.haDepositions++;
      process.kill();
      proc.master?.abandonAttempt();
      this.current = null;
      this.world.schedule(0, () => void this.resumeAfterKill(proc, { left: 0, afterMs: 0, downMs: 0 }));
    });
    elected.start();
    if (spec.restoreFrom !== JOB_DIR) return { leadership: elected, restoreFrom: spec.restoreFrom };
    const pointer = await store.latest('sim');
    const onDisk = this.completedByRun(spec.startedFrom);
    for (const id of onDisk) if (id !== pointer?.checkpointId) this.abandoned.add(checkpointDir(JOB_DIR, id));
    if (onDisk.some((id) => id > (pointer?.checkpointId ?? 0))) this.recovery.haRestoresBehindDisk++;
    proc.known.clear();
    if (pointer === null) return { leadership: elected, restoreFrom: newestSavepoint(this.files, SAVEPOINT_ROOT) ?? spec.startedFrom ?? undefined };
    proc.known.add(pointer.checkpointId);
    this.recovery.haTakeovers++;
    this.trace?.(
      `${this.world.now().toFixed(1)}ms process ${process.pid} leads (epoch ${elected.epoch}); the pointer names checkpoint ${pointer.checkpointId}`,
    );
    return { leadership: elected, restoreFrom: pointer.location };
  }

  private killBy(proc: Proc, plan: KillPlan, why: string): boolean {
    this.armed.delete(plan);
    return this.kill(proc, why, { left: plan.again, afterMs: plan.againAfterMs, downMs: plan.downMs });
  }

  /** Kills the process: its memory is gone; the disk and the sinks' external side stay. A new process follows. */
  private kill(proc: Proc, why: string, again: Proc['again'], outsideWindow = false): boolean {
    if (proc !== this.current || !proc.process.isAlive || !(this.faultsActive || outsideWindow) || this.recovery.kills >= MAX_KILLS || this.settled !== null)
      return false;
    proc.process.kill();
    if (this.changelogs.kill()) this.recovery.changelogKillsDuringMaterialization++;
    // What the operating system does for a dead process: close its files and store handles. Nothing is flushed.
    proc.master?.abandonAttempt();
    this.current = null;
    this.recovery.kills++;
    this.trace?.(`${this.world.now().toFixed(1)}ms process ${proc.process.pid} killed ${why}`);
    this.world.schedule(again.downMs, () => void this.resumeAfterKill(proc, again));
    return true;
  }

  private async resumeAfterKill(dead: Proc, again: Proc['again']): Promise<void> {
    // The job's checkpoint directory, as `weir run --from <job dir>`; before its first checkpoint,
    // the newest savepoint the user took, or the one the run started from.
    const onDisk = this.completedByRun(dead.startedFrom);
    if (completedOnDisk(this.files, JOB_DIR).length > onDisk.length) this.recovery.earlierRunCheckpointsPassed++;
    const fromDisk = onDisk.length > 0;
    if (!fromDisk && dead.finalCompleted) {
      // It died while shutting down after its final checkpoint (commits done, checkpoints being
      // deleted): the job is done, and a run from nothing would repeat its output (the engine refuses it).
      this.diedShuttingDown = true;
      this.recovery.deathsShuttingDown++;
      this.settled = { result: { jobId: JOB_ID, status: 'FINISHED', restarts: 0, checkpoints: [], lastCheckpointLocation: null } };
      this.trace?.(`${this.world.now().toFixed(1)}ms process ${dead.process.pid} died shutting down after its final checkpoint: the job is done`);
      return;
    }
    // Only the checkpoint restored is claimed; the older ones the dead process retained stay on the disk, unowned.
    for (const id of onDisk.slice(0, -1)) this.abandoned.add(checkpointDir(JOB_DIR, id));
    const restoreFrom = fromDisk ? JOB_DIR : (newestSavepoint(this.files, SAVEPOINT_ROOT) ?? dead.startedFrom ?? undefined);
    await this.start({ parallelism: dead.parallelism, variant: dead.variant, restoreFrom, claim: fromDisk, again, startedFrom: dead.startedFrom });
  }

  /**
   * The completed checkpoints in the job directory that the run started from `startedFrom` (a
   * savepoint, or null: the first run) can own: a run restored from savepoint n numbers its
   * checkpoints from n + 1. What an earlier run left there (a checkpoint corrupted at rest is never
   * deleted) is not this run's: `weir run --from <savepoint>` writes a new job directory, which
   * the simulator's one job directory stands for.
   */
  private completedByRun(startedFrom: string | null): CheckpointId[] {
    const origin = startedFrom === null ? null : parseSavepointDirName(baseName(startedFrom));
    return completedOnDisk(this.files, JOB_DIR).filter((id) => origin === null || id > origin.checkpointId);
  }

  /** Snapshots of this process's backends start their async part late; their pinned writes are counted. */
  private delayedSnapshots(process: SimProcess): DelayedSnapshots {
    const delayed = new DelayedSnapshots(process, this.world.random, this.k.asyncStartDelayMsMax);
    this.pinned.push(delayed.counts);
    return delayed;
  }

  // ---- results ----

  private add(checker: string, messages: string[]): void {
    if (messages.length > 0) this.problems.set(checker, [...(this.problems.get(checker) ?? []), ...messages].slice(0, 20));
  }

  private async record(): Promise<RunRecord> {
    const finished = this.settled !== null && 'result' in this.settled;
    const committed = finished ? this.sinks.committed(typeof this.job !== 'string') : [];
    this.add('per-key-sequence', checkSequences(this.log));
    this.add('commit-once', checkCommits(this.sinks.ledger));
    this.add('barrier-order', this.barrierOrder.problems);
    this.recovery.windowStartsHeld = this.sinks.windowStartsHeld;
    this.recovery.splitLanesRestoredAtEnd = this.sinks.splitLogs?.restoresWithLaneAtEnd ?? 0;
    this.recovery.splitIdleEndsHeld = this.sinks.splitLogs?.idleEndsHeld ?? 0;
    // A task manager the cancellation watchdog ended must never run another attempt.
    this.add('task-managers', this.tmFaults.violations);
    this.recovery.staleDataMessages = this.tmFaults.staleMessages;
    this.recovery.staleControlMessages = this.tmFaults.staleControlMessages + this.procs.reduce((n, p) => n + (p.master?.staleControlMessages ?? 0), 0);
    this.recovery.taskManagerDeaths = this.tmFaults.deaths;
    this.recovery.taskManagerExits = this.tmFaults.exits;
    this.recovery.controlConnectionDrops = this.tmFaults.controlDrops;
    this.recovery.dataConnectionDrops = this.tmFaults.dataDrops;
    this.recovery.partitionsHealed = this.tmFaults.partitionsHealed;
    this.recovery.partitionsOutlived = this.tmFaults.partitionsOutlived;
    this.recovery.orderedRecoveryCommits = this.sinks.store.orderedRecoveryCommits;
    this.recovery.haStaleRepeats = this.sinks.ledger.staleRepeats;
    this.recovery.staleTriggers = this.procs.reduce((n, p) => n + p.rpc.staleTriggers, 0);
    this.recovery.pinnedOverwrites = this.pinned.reduce((n, c) => n + c.overwrites, 0);
    this.recovery.changelogTruncations = this.changelogs.sum('truncations');
    this.recovery.changelogUploadRetries = this.changelogs.sum('retries');
    this.recovery.pinnedDeletions = this.pinned.reduce((n, c) => n + c.deletions, 0);
    if (this.k.faults.storage.objectStore) this.recovery.objectStoreSeeds = 1;
    for (const p of this.procs) {
      this.recovery.lostUploads += p.storage.objectStore.lostUploads;
      this.recovery.latePuts += p.storage.objectStore.latePuts;
      this.recovery.metadataAnswersLost += p.storage.objectStore.metadataAnswersLost;
    }
    // A process that died shutting down leaves its cleanup half done; nothing runs the job again to finish it.
    if (finished && !this.diedShuttingDown) this.add('storage', await this.storageProblems());
    return {
      settled: this.settled,
      committed,
      world: this.world,
      problems: this.problems,
      unexpected: this.unexpected,
      restarts: this.counts.restarts,
      checkpointsCompleted: this.counts.checkpoints,
      taskFaults: this.taskFaults.fired.length,
      storageFaults: this.procs.reduce((n, p) => n + p.storage.injected.writeFail + p.storage.injected.torn + p.storage.injected.renameFail, 0),
      messagesLost: this.procs.reduce((n, p) => n + p.rpc.lost, 0),
      recovery: this.recovery,
    };
  }

  /** Checker (d), keeping savepoints, checkpoints corrupted at rest and what abandoned checkpoints refer to. */
  private async storageProblems(): Promise<string[]> {
    const disk = new MemoryCheckpointStorage(JOB_ID, { files: this.files });
    const abandonedFiles = new Set<string>();
    for (const dir of this.abandoned) {
      const meta = await readMetadataAt(disk, dir).catch(() => null);
      if (meta === null) continue;
      this.recovery.abandonedCheckpoints++;
      abandonedFiles.add(metadataPath(dir));
      for (const f of filePathsOf(meta)) abandonedFiles.add(f);
    }
    // A PUT that landed after its checkpoint was discarded is an orphan no listing of a living job
    // reaches (a lifecycle rule's work, docs/s3-storage.md); any other file left is checker (d)'s.
    const late = new Set(this.procs.flatMap((p) => [...p.storage.lateLanded]));
    for (const f of this.files.keys()) if (late.has(f)) this.recovery.lateOrphans++;
    const kept = (f: string) =>
      f.startsWith(`${SAVEPOINT_ROOT}/`) ||
      late.has(f) ||
      abandonedFiles.has(f) ||
      this.writtenByStaleLeaders.has(f) ||
      this.corruptedFiles.has(f) ||
      [...this.corruptedDirs].some((d) => f.startsWith(`${d}/`));
    return checkStorage(
      this.procs.flatMap((p) => p.storage.violations),
      this.files.keys(),
      kept,
    );
  }
}
