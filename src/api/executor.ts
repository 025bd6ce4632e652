/**
 * The local executor: deploys a job graph the environment built, with its resolved options and the
 * cluster settings, and runs it in this process — subtasks on task managers in worker threads, on
 * in-memory task managers (the simulator), or in this thread. `StreamEnvironment` builds the graph
 * and validates options; this decides where the job runs and starts its job master. A remote
 * executor (task managers on other hosts) takes the same inputs.
 */
import { availableParallelism } from 'node:os';
import { realEnvironment } from '../core/adapters.ts';
import type { Environment } from '../core/time.ts';
import type { Deployer } from '../cluster/job-master/attempt-deployment.ts';
import { placeSubtasks } from '../cluster/job-master/placement.ts';
import { remoteDeployer, type TaskManagerWatch } from '../cluster/job-master/remote-deployment.ts';
import { launchWorkerTaskManagers } from '../cluster/launchers/worker-task-managers.ts';
import { launchInMemoryTaskManagers } from '../cluster/launchers/in-memory-task-managers.ts';
import { decideTaskManagerCount, type TaskManagerCount } from '../cluster/launchers/task-manager-count.ts';
import { NO_FAULTS } from '../runtime/faults.ts';
import { buildExecutionPlan } from '../graph/execution-plan.ts';
import { ConfigError } from '../core/errors.ts';
import { jobId as toJobId, type JobId } from '../core/ids.ts';
import { JobMaster } from '../cluster/job-master/job-master.ts';
import { CollectSink } from '../connectors/collect/collect-sink.ts';
import type { JobGraph } from '../graph/job-graph.ts';
import type { StateBackendFactory } from '../state/backend.ts';
import { HeapStateBackendFactory } from '../state/heap/heap-backend-factory.ts';
import { EmbeddedStateBackendFactory } from '../state/embedded/embedded-backend-factory.ts';
import { restoreCandidates as findRestoreCandidates, publishedCandidates } from '../checkpoint/restore/restore-candidates.ts';
import { FsCheckpointStorage } from '../storage/fs-storage.ts';
import type { CheckpointStorage } from '../storage/storage.ts';
import { openCheckpointStorage, resolveStorageLocation } from '../storage/location.ts';
import type { ClusterListenOptions, InternalRunOptions, JobClient, StreamEnvironment } from './environment.ts';
import { tcpDeployer } from './tcp-deployment.ts';
import { buildInMemoryTaskManagerContext, type InMemoryTaskManagerJob } from './in-memory-task-manager-job.ts';
import { MemoryCheckpointStorage } from '../storage/memory-storage.ts';
import { memoryStoreUrl } from '../storage/memory-stores.ts';
import { preflight } from './preflight.ts';
import { ChangelogStateBackendFactory } from '../state/changelog/changelog-backend-factory.ts';
import type { ResolvedClusterOptions, ResolvedOptions, ResolvedStateBackend, StreamEnvironmentOptions } from './options.ts';

/** What the environment hands an executor: the job graph and the options it was built with. */
export interface ExecutableJob {
  readonly graph: JobGraph;
  /** The validated options, with defaults applied. */
  readonly options: ResolvedOptions;
  /** The options as given, for task managers that rebuild the job in their own thread. */
  readonly given: StreamEnvironmentOptions;
  /** The job module this job comes from (task managers in worker threads load it), or null for a plain script. */
  readonly modulePath: string | null;
  /** Defines this job again on another environment: what an in-memory task manager builds its own graph from. */
  readonly rebuild: (env: StreamEnvironment) => void;
}

/** The settings deployment reads: the cluster settings and the job's channel sizes. */
interface DeploySettings extends ResolvedClusterOptions {
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  readonly remoteChannelCapacity: number;
}

/** The job's side of a task manager in a worker thread (compiled next to this file, or run from the sources under tsx). */
const WORKER_JOB_SIDE = new URL(import.meta.url.endsWith('.ts') ? './task-manager-worker-job.ts' : './task-manager-worker-job.js', import.meta.url).href;

/** Runs one job in this process: picks where its subtasks run and starts its job master. */
export class LocalExecutor {
  private readonly options: DeploySettings;
  private readonly given: StreamEnvironmentOptions;
  private readonly jobModulePath: string | null;

  constructor(
    private readonly job: ExecutableJob,
    cluster: ResolvedClusterOptions,
  ) {
    const o = job.options;
    this.options = { ...cluster, bufferRecords: o.bufferRecords, channelCapacity: o.channelCapacity, remoteChannelCapacity: o.remoteChannelCapacity };
    this.given = job.given;
    this.jobModulePath = job.modulePath;
  }

  /** Starts the job and resolves once its job master runs, with a client to watch and control it. */
  async execute(name: string, run: InternalRunOptions): Promise<JobClient> {
    const { graph, options } = this.job;
    const env = run.env ?? realEnvironment();
    const id = toJobId(options.jobId ?? defaultJobId(name, env.random.int(0x1000000)));
    const storage = run.storage ?? createStorage(options, id);
    if (run.storage === undefined) {
      for (const message of preflight(options, storage instanceof FsCheckpointStorage ? storage.jobDir : null, localDirOption(this.given)))
        run.onEvent?.({ type: 'log', message });
      // A storage that is reached over the network (S3) is checked once, before anything starts.
      // Only then a turn is awaited: a job on the simulator's clock starts in the same turn as before.
      if (storage.preflight !== undefined) await storage.preflight();
    }
    const restoreFrom = run.restoreFrom ? resolveStorageLocation(run.restoreFrom, 'restoreFrom') : null;
    const restoreCandidates =
      run.restorePublished !== undefined && run.restorePublished.length > 0
        ? publishedCandidates(storage, run.restorePublished)
        : restoreFrom !== null
          ? await findRestoreCandidates(storage, restoreFrom)
          : [];
    if (run.claim && restoreCandidates.length === 1 && (await restoreCandidates[0]!.load()).kind === 'savepoint') {
      throw new ConfigError('claim', `${restoreCandidates[0]!.location} is a savepoint; savepoints belong to their owner and cannot be claimed`);
    }
    const leadership = run.leadership;
    const backends = run.wrapBackends ? run.wrapBackends(stateBackendFactory(options.stateBackend)) : stateBackendFactory(options.stateBackend);
    const master: JobMaster = new JobMaster(
      {
        jobId: id,
        name,
        graph,
        checkpointing: options.checkpointing,
        restartStrategy: options.restartStrategy,
        backends,
        storage,
        bufferRecords: options.bufferRecords,
        channelCapacity: options.channelCapacity,
        restoreCandidates,
        allowNonRestoredState: run.allowNonRestoredState ?? false,
        acceptDuplicates: run.acceptDuplicates ?? false,
        claim: run.claim ?? false,
        ...(leadership === undefined
          ? {}
          : { leaderEpoch: leadership.epoch, publishCompleted: (id: number, location: string) => leadership.publish(id, location) }),
        ...(run.listen !== undefined
          ? { deployer: await this.tcpDeployer(run.listen, id, graph, env, run, storage) }
          : run.inMemoryTaskManagers === undefined
            ? this.taskManagerDeployer(id, graph, env, run)
            : this.inMemoryDeployer(run.inMemoryTaskManagers, graph, env, run, storage, id)),
      },
      env,
      run,
    );
    run.onJobMaster?.(master);
    master.start();
    return clientOf(id, master);
  }

  /** Task managers in this thread over in-memory links; each builds its own graph, storage client and stream factory from data. */
  private inMemoryDeployer(
    count: number,
    graph: JobGraph,
    env: Environment,
    run: InternalRunOptions,
    storage: CheckpointStorage,
    id: JobId,
  ): { deployer: Deployer } {
    if (!Number.isInteger(count) || count < 1) throw new ConfigError('inMemoryTaskManagers', `must be an integer >= 1, got ${count}`);
    const slots = this.options.slotsPerTaskManager;
    placeSubtasks(buildExecutionPlan(graph), count, slots);
    const job: InMemoryTaskManagerJob = {
      // A script has no module to run again: its definition (sources and sinks included) is compiled again.
      build: run.taskManagerJob ?? this.job.rebuild,
      options: this.given,
      jobId: id,
      storageUrl: run.taskManagerStorage?.url ?? (storage instanceof MemoryCheckpointStorage ? memoryStoreUrl(storage) : storage.description),
      ...(run.taskManagerStorage?.open ? { openStorage: run.taskManagerStorage.open } : {}),
      ...(run.wrapBackends ? { wrapBackends: run.wrapBackends } : {}),
      env,
      ...(run.taskManagerClockSkewMs ? { clockSkewMs: run.taskManagerClockSkewMs } : {}),
      faults: run.faults ?? NO_FAULTS,
      allowNonRestoredState: run.allowNonRestoredState ?? false,
      elementsPerStep: run.elementsPerStep ?? 64,
      sourceBatchRecords: run.sourceBatchRecords ?? this.options.bufferRecords,
    };
    const context = (index: number) => buildInMemoryTaskManagerContext(index, job);
    const launch = launchInMemoryTaskManagers(count, context, env.scheduler, run.loseControlMessage, run.taskManagerFaults, slots);
    return { deployer: remoteDeployer(launch, (plan) => placeSubtasks(plan, count, slots), env, this.watch()) };
  }

  /**
   * A job from a job module runs its subtasks on task managers in worker threads that build the job
   * from the module (one per core by default, at least one), so no user function runs on this
   * thread; a job without a known module, with a CollectSink or asked to run `'in-thread'` runs in
   * this thread, and says so if task managers were asked for.
   */
  private taskManagerDeployer(id: JobId, graph: JobGraph, env: Environment, run: InternalRunOptions): { deployer?: Deployer } {
    const decision = taskManagerCount(graph, this.options, this.jobModulePath);
    if (decision.notice !== null) {
      process.emitWarning(decision.notice, { code: 'WEIR_TASK_MANAGERS_IN_THREAD' });
      run.onEvent?.({ type: 'log', message: decision.notice });
    }
    const count = decision.taskManagers;
    const modulePath = this.jobModulePath;
    if (count === 0 || modulePath === null) return {};
    const slots = this.options.slotsPerTaskManager;
    placeSubtasks(buildExecutionPlan(graph), count, slots); // a ConfigError now rather than at the first deploy
    const launch = launchWorkerTaskManagers(
      count,
      {
        entry: WORKER_JOB_SIDE,
        modulePath,
        options: { ...this.given },
        jobId: id,
        allowNonRestoredState: run.allowNonRestoredState ?? false,
        elementsPerStep: run.elementsPerStep ?? 64,
        sourceBatchRecords: run.sourceBatchRecords ?? this.options.bufferRecords,
      },
      slots,
    );
    return { deployer: remoteDeployer(launch, (plan) => placeSubtasks(plan, count, slots), env, this.watch()) };
  }

  /** Task manager processes that join over TCP at `listen` (tcp-deployment.ts). */
  private tcpDeployer(
    listen: ClusterListenOptions,
    id: JobId,
    graph: JobGraph,
    env: Environment,
    run: InternalRunOptions,
    storage: CheckpointStorage,
  ): Promise<Deployer> {
    const job = {
      jobId: id,
      graph,
      modulePath: this.jobModulePath,
      options: { ...this.given },
      storage,
      allowNonRestoredState: run.allowNonRestoredState ?? false,
      elementsPerStep: run.elementsPerStep ?? 64,
      sourceBatchRecords: run.sourceBatchRecords ?? this.options.bufferRecords,
    };
    return tcpDeployer(listen, job, env, this.watch(), (message) => run.onEvent?.({ type: 'log', message }));
  }

  private watch(): TaskManagerWatch {
    return { heartbeat: this.options.heartbeat, cancellationTimeoutMs: this.options.cancellationTimeoutMs };
  }
}

/**
 * Where a job's subtasks run when it is executed: how many task managers (0: in the executing
 * thread) and why. The default for a job module is one per core, capped at the job's highest
 * parallelism, at least one (see `ClusterOptions.taskManagers`).
 */
export function taskManagerCount(graph: JobGraph, cluster: ResolvedClusterOptions, modulePath: string | null): TaskManagerCount {
  return decideTaskManagerCount({
    requested: cluster.taskManagers,
    slotsPerTaskManager: cluster.slotsPerTaskManager,
    cores: availableParallelism(),
    highestParallelism: Math.max(1, ...graph.vertices.map((v) => v.parallelism)),
    fromJobModule: modulePath !== null,
    inProcessSinks: graph.vertices.flatMap((v) => v.chain.filter((n) => n.sink instanceof CollectSink).map((n) => n.name)),
  });
}

/** The state backends of a job: one case per member of the `stateBackend` union. */
export function stateBackendFactory(backend: ResolvedStateBackend): StateBackendFactory {
  switch (backend.type) {
    case 'changelog': {
      const { over, type: _, ...settings } = backend;
      return new ChangelogStateBackendFactory(stateBackendFactory(over), settings);
    }
    case 'heap':
      return new HeapStateBackendFactory();
    case 'embedded':
      return new EmbeddedStateBackendFactory({
        ...(backend.localDir === null ? {} : { localDir: backend.localDir }),
        cacheEntriesMax: backend.cacheEntriesMax,
        incremental: backend.incremental,
        incrementsShareMax: backend.incrementsShareMax,
      });
  }
}

/**
 * The checkpoint storage of job `id`, opened by the storage scheme of `checkpointStorage`. With
 * `inlineAll` (a task manager's storage in a worker thread), memory storage keeps every state
 * stream inline in its handle: the handles travel to the job master in the acks and into its
 * `_metadata`, so nothing is left in a worker's map that the job master or a later attempt would need.
 */
export function createStorage(options: ResolvedOptions, id: JobId, o: { inlineAll?: boolean } = {}): CheckpointStorage {
  return openCheckpointStorage(options.checkpointStorage, id, { ...o, s3: options.s3, operationTimeoutMs: options.checkpointing.timeoutMs });
}

/** The option that named the embedded backend's local directory, for errors about it. */
function localDirOption(given: StreamEnvironmentOptions): string {
  return typeof given.stateBackend === 'object' && given.stateBackend.type === 'embedded' && given.stateBackend.localDir !== undefined
    ? 'stateBackend.localDir'
    : 'embeddedState.localDir';
}

function clientOf(id: JobId, master: JobMaster): JobClient {
  return {
    jobId: id,
    result: master.result,
    metrics: () => master.metrics(),
    cancel: () => master.cancel(),
    triggerCheckpoint: async () => {
      const c = await master.triggerCheckpoint();
      return { checkpointId: c.checkpointId, location: c.location, kind: c.kind };
    },
    savepoint: async (dir) => (await master.savepoint(dir)).location,
    stopWithSavepoint: async (dir) => (await master.stopWithSavepoint(dir)).location,
    cancelWithSavepoint: async (dir) => {
      const sp = await master.savepoint(dir);
      await master.cancel();
      return sp.location;
    },
  };
}

function defaultJobId(name: string, suffix: number): string {
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'job';
  return `${slug}-${suffix.toString(16).padStart(6, '0')}`;
}
