/**
 * StreamEnvironment: where a job is defined. Options are validated when the environment is
 * created; `execute` builds the job graph and hands it, with the options, to the local executor
 * (`executor.ts`), which runs it in this process until it finishes, fails or is cancelled.
 */
import type { ToJobMaster } from '../cluster/transport/protocol.ts';
import type { InMemoryTaskManagerFaults } from '../cluster/launchers/in-memory-task-managers.ts';
import type { TaskManagerCount } from '../cluster/launchers/task-manager-count.ts';
import { ConfigError } from '../core/errors.ts';
import type { CheckpointId, JobId } from '../core/ids.ts';
import type { ExecutionHooks, JobMaster } from '../cluster/job-master/job-master.ts';
import type { JobEvent, JobMetrics, JobResult } from '../cluster/job-master/job-events.ts';
import { IndexedSource } from '../connectors/generator/indexed-source.ts';
import { TextFileSource } from '../connectors/files/text-file-source.ts';
import { buildJobGraph, type JobGraph } from '../graph/job-graph.ts';
import { LogicalGraph } from '../graph/transformation.ts';
import { SourceReaderOperator } from '../runtime/operators/source-operator.ts';
import type { Source } from '../runtime/source.ts';
import { WatermarkStrategy } from '../runtime/time/watermark-strategy.ts';
import type { TwoPhaseCommitSink } from '../runtime/sink.ts';
import { TwoPhaseCommitSinkOperator } from '../runtime/operators/sink-operators.ts';
import type { StateBackendFactory } from '../state/backend.ts';
import type { CheckpointStorage } from '../storage/storage.ts';
import { DataStream } from './data-stream.ts';
import { createStorage, LocalExecutor, stateBackendFactory, taskManagerCount } from './executor.ts';
import { refuseExecuteDuringImport } from './job-module-import.ts';
import { resolveOptions, type ResolvedOptions, type StreamEnvironmentOptions } from './options.ts';
import { executeLed, haSettingsOf, ownSubmission } from './ha-execute.ts';

/** Options of `StreamEnvironment.fromSource`. */
export interface SourceOptions<T> {
  /**
   * Event time of the source's records: a timestamp assigner and a watermark generator run in
   * each source subtask. A split source (`SplitSourceReader`) runs a generator and an idleness
   * timer per split: the subtask's watermark is the minimum over its active splits, so a split
   * ahead in event time does not make another split's records late, a split silent for the
   * strategy's `withIdleness` timeout stops holding the watermark back (the subtask is idle only
   * when all its splits are), and a split that sends again counts again at once without moving
   * the watermark back. Other readers get one generator per subtask. Default: no timestamps, no
   * watermarks (only the maximum watermark when a bounded source ends).
   */
  watermarks?: WatermarkStrategy<T>;
}

/** What `StreamEnvironment.generate` produces. */
export interface GeneratorOptions {
  /** Number of records (>= 0); Infinity for an unbounded stream. */
  readonly count: number;
  /** Records per second over all subtasks; omit for as fast as possible. */
  readonly ratePerSec?: number;
  /** Seed passed to the record function, so the same seed gives the same records; default 0. */
  readonly seed?: number;
}

/** How one run of a job starts: {@link StreamEnvironment.execute} and {@link StreamEnvironment.executeAsync}. */
export interface RunOptions {
  /**
   * A checkpoint or savepoint directory (a `chk-N` or `savepoint-...` directory) to start from, or a
   * job's checkpoint directory: then its newest retained checkpoint that verifies, falling back to
   * older ones as recovery does, then to the checkpoint that job was itself restored from (its
   * lineage, recorded in the job directory), under the same sink-aware rule. Default: start empty.
   * A path that holds no usable checkpoint rejects the run with a `RestoreError`.
   */
  readonly restoreFrom?: string;
  /**
   * Start even if `restoreFrom` holds state of an operator uid the job no longer has (that state is
   * dropped). Default false: the run is rejected with a `RestoreError` naming the uid.
   */
  readonly allowNonRestoredState?: boolean;
  /**
   * Restore even where a sink has committed output of a newer checkpoint than the one restored and
   * cannot roll it back, accepting that this output is committed a second time. Default false: the
   * job fails with an error naming the sink and both checkpoints.
   */
  readonly acceptDuplicates?: boolean;
  /**
   * Take ownership of the checkpoint named by `restoreFrom`: retention may delete it once newer
   * checkpoints exist. Without it the restored checkpoint is never touched. A savepoint cannot be
   * claimed (`ConfigError`). Default false.
   */
  readonly claim?: boolean;
  /** Called with every event of the job (attempts, restarts, checkpoints, the end), on the job's own loop: keep it quick. */
  readonly onEvent?: (event: JobEvent) => void;
  /**
   * Run the subtasks on task manager processes that join over TCP (`weir taskmanager --connect`,
   * on this host or others) instead of worker threads: the job master listens at this address and
   * deploys once the task managers registered. Needs a job module (`setJobModule`).
   */
  readonly listen?: ClusterListenOptions;
}

/** TLS for the connections of a cluster (PEM contents): every side presents a certificate of the shared CA (mutual TLS). */
export interface ClusterTls {
  /** This process's certificate, PEM. */
  readonly cert: string | Buffer;
  /** The private key of `cert`, PEM. */
  readonly key: string | Buffer;
  /** The certificate of the CA every process of the cluster trusts, PEM. */
  readonly ca: string | Buffer;
}

/** Where and how a job master accepts task managers over TCP ({@link RunOptions.listen}). */
export interface ClusterListenOptions {
  /** The address to listen at: a host name or IP address of this machine. */
  readonly host: string;
  /** The port to listen at (0: any free port, reported through `onListening`). */
  readonly port: number;
  /** Task managers to wait for before the first deploy (at least 1). */
  readonly taskManagers: number;
  /** The join secret every task manager must know (at least 16 characters); never sent on the wire. */
  readonly token: string;
  /** Certificates for mutual TLS; without them only a loopback address is allowed, unless `insecure`. */
  readonly tls?: ClusterTls;
  /** Listen on a non-loopback address without TLS (a network you trust). Default false. */
  readonly insecure?: boolean;
  /** Milliseconds a deploy waits for enough task manager slots before the attempt fails; default 60000. */
  readonly registrationTimeoutMs?: number;
  /** `'ship'` (default): task managers get the job module bundled from here; `'same-path'`: each loads its own copy at the same path, checked by hash. */
  readonly code?: 'ship' | 'same-path';
  /** Called once the job master listens, with the bound address. */
  readonly onListening?: (address: { readonly host: string; readonly port: number }) => void;
}

/**
 * RunOptions plus the hooks of the simulator and of tests that inspect internals (a seeded
 * environment, fault injection, a lossy RPC, faulty storage, the job master). Not public: reached
 * through `src/internal.ts`.
 * @internal
 */
export interface InternalRunOptions extends RunOptions, ExecutionHooks {
  /** Checkpoint storage to use instead of the one the options name (the simulator's faulty storage). */
  readonly storage?: CheckpointStorage;
  /** Called with the job master before it starts. */
  readonly onJobMaster?: (master: JobMaster) => void;
  /**
   * Runs the subtasks in this many task managers in this thread, over the in-memory transport
   * (serialized channels, the control protocol), on the environment's scheduler: for the simulator
   * and tests. Overrides `taskManagers`.
   */
  readonly inMemoryTaskManagers?: number;
  /**
   * With `inMemoryTaskManagers`: a message from task manager `taskManager` to the job master for
   * which this returns true is lost on the way (lost heartbeats, in tests).
   */
  readonly loseControlMessage?: (taskManager: number, message: ToJobMaster) => boolean;
  /** With `inMemoryTaskManagers`: stalled data links, task managers stuck on cancel or dying alone (the simulator's faults). */
  readonly taskManagerFaults?: InMemoryTaskManagerFaults;
  /**
   * With `inMemoryTaskManagers`: what each task manager builds its own job graph with, as a job
   * module's default export (the simulator rebuilds its scenario). Default: this environment's job
   * definition, compiled again for each task manager.
   */
  readonly taskManagerJob?: (env: StreamEnvironment) => void | Promise<void>;
  /**
   * With `inMemoryTaskManagers`: the URL of the checkpoint storage task managers open their own
   * client of (`memory://<store>`), and how they open it (the simulator: with its storage faults).
   * Default: the job master's memory store, or its checkpoint directory, opened plainly.
   */
  readonly taskManagerStorage?: { readonly url: string; readonly open?: (url: string, index: number) => CheckpointStorage };
  /**
   * With `inMemoryTaskManagers`: ms task manager `index`'s clock (wall and monotonic) runs ahead
   * of the job master's (as on another host), for tests of the clock-offset correction. Default: none.
   */
  readonly taskManagerClockSkewMs?: (index: number) => number;
  /** Wraps the state backends the options name (the simulator delays when async snapshot parts start). */
  readonly wrapBackends?: (backends: StateBackendFactory) => StateBackendFactory;
  /**
   * High availability: the checkpoints the HA store published, newest first (the first is
   * `restoreFrom`); given, the run restores from the newest that verifies, read lazily, instead of
   * reading `restoreFrom` alone at the start.
   */
  readonly restorePublished?: readonly { readonly checkpointId: number; readonly location: string }[];
  /**
   * High availability: this job master leads with `epoch` (every attempt's epoch starts with it,
   * so task managers refuse an older leader's messages), and publishes each completed checkpoint
   * through `publish` before any subtask is told (a rejection fails the checkpoint: nothing commits).
   */
  readonly leadership?: { readonly epoch: number; publish(checkpointId: number, location: string): Promise<void> };
}

/** A checkpoint that completed: durably written, restorable with `RunOptions.restoreFrom: location`. */
export interface CompletedCheckpointInfo {
  /** Its number within the job (1, 2, ...). */
  readonly checkpointId: CheckpointId;
  /** Its directory (or `memory:` key with in-memory storage). */
  readonly location: string;
  /** A checkpoint (owned by Weir, subject to retention) or a savepoint (owned by you). */
  readonly kind: 'checkpoint' | 'savepoint';
}

/** A job running in this process, as `StreamEnvironment.executeAsync` returns it. */
export interface JobClient {
  /** The job's id: its directory name under the checkpoint storage. */
  readonly jobId: string;
  /** Resolves when the job FINISHED or was CANCELED; rejects with a `JobFailedError` when it failed for good. */
  readonly result: Promise<JobResult>;
  /** A snapshot of the job's status and counters now. */
  metrics(): JobMetrics;
  /** Cancels the job; resolves once every task stopped (the result then resolves with status CANCELED). */
  cancel(): Promise<void>;
  /**
   * Takes a checkpoint now, besides the periodic ones; resolves once it completed.
   * @throws CheckpointFailedError when it fails (timeout, a task declined, storage error).
   */
  triggerCheckpoint(): Promise<CompletedCheckpointInfo>;
  /**
   * Takes a savepoint under `dir` (a directory; `memory:...` with memory storage); the job goes on.
   * Resolves with the savepoint's location.
   * @throws CheckpointFailedError when it fails.
   */
  savepoint(dir: string): Promise<string>;
  /**
   * Stop-with-savepoint: sources stop at the savepoint's barrier, sinks commit everything up to it,
   * and the job finishes. Resolves with the savepoint's location.
   * @throws CheckpointFailedError when the savepoint fails (the job then goes on).
   */
  stopWithSavepoint(dir: string): Promise<string>;
  /** Takes a savepoint, then cancels the job; resolves with the savepoint's location. */
  cancelWithSavepoint(dir: string): Promise<string>;
}

/**
 * Where a job is defined and run: create one with options, add sources and transformations, then
 * `execute` it. Each environment holds one job.
 */
export class StreamEnvironment {
  /** The validated options, with defaults applied. */
  readonly options: ResolvedOptions;
  /** The job's definition; an in-memory task manager without a builder of its own takes the job master's (see inMemoryDeployer). */
  private graph = new LogicalGraph();
  /** The job module this environment's job comes from (set by `weir run`), or null for a plain script. */
  private jobModulePath: string | null = null;

  private constructor(
    options: ResolvedOptions,
    /** The options as given, for task managers that rebuild the job in their own thread. */
    private readonly given: StreamEnvironmentOptions,
  ) {
    this.options = options;
  }

  /**
   * A new environment.
   * @throws ConfigError naming the first option at fault (unknown option, bad value).
   */
  static create(options?: StreamEnvironmentOptions): StreamEnvironment {
    return new StreamEnvironment(resolveOptions(options), options ?? {});
  }

  /**
   * The job module that builds this job (its default export called with an environment created
   * from the same options): task managers in worker threads load it to build the same job graph.
   * @internal
   */
  setJobModule(path: string): void {
    this.jobModulePath = path;
  }

  /**
   * A stream read from a source (splits assigned to subtasks, positions checkpointed); `name`
   * defaults to the source's; `options.watermarks` gives its records event time.
   * @throws ConfigError when `options.watermarks` is not a WatermarkStrategy.
   */
  fromSource<T>(source: Source<T>, name = source.name, options: SourceOptions<T> = {}): DataStream<T> {
    const watermarks = options.watermarks ?? null;
    if (watermarks !== null && !(watermarks instanceof WatermarkStrategy))
      throw new ConfigError(`fromSource(${name}).watermarks`, 'must be a WatermarkStrategy');
    const node = this.graph.add({
      kind: 'source',
      name,
      inputs: [],
      keySelectors: [],
      createOperator: () => new SourceReaderOperator(source.createReader(), watermarks as WatermarkStrategy<unknown> | null),
    });
    node.source = source;
    return new DataStream<T>(this.graph, [{ node, partitioner: null }], node);
  }

  /** A bounded stream of the given records, read by one subtask, in order. */
  fromElements<T>(...elements: T[]): DataStream<T> {
    return this.fromCollection(elements);
  }

  /** A bounded stream of a copy of `elements`, read by one subtask, in order. */
  fromCollection<T>(elements: readonly T[]): DataStream<T> {
    const copy = [...elements];
    return this.fromSource(new IndexedSource('collection', { count: copy.length }, (i): T => copy[i] as T)).setParallelism(1);
  }

  /**
   * A deterministic generated stream: record i is `produce(i, seed)`; indices are split over the
   * source's subtasks and the position is checkpointed, so a restore continues where it left off.
   * @throws ConfigError when `count` is not a number >= 0 or `ratePerSec` is not > 0.
   */
  generate<T>(options: GeneratorOptions, produce: (index: number, seed: number) => T): DataStream<T> {
    if (typeof options.count !== 'number' || !(options.count >= 0))
      throw new ConfigError('generate.count', `must be a number >= 0 or Infinity, got ${JSON.stringify(options.count)}`);
    if (options.ratePerSec !== undefined && !(options.ratePerSec > 0)) throw new ConfigError('generate.ratePerSec', `must be > 0, got ${options.ratePerSec}`);
    const seed = options.seed ?? 0;
    return this.fromSource(new IndexedSource('generate', { count: options.count, ratePerSec: options.ratePerSec }, (i) => produce(i, seed)));
  }

  /**
   * Lines of text files (UTF-8); each file is read by one subtask and its position is checkpointed.
   * @throws ConfigError when no path is given. A missing file fails the job when it runs.
   */
  readTextFile(...paths: string[]): DataStream<string> {
    if (paths.length === 0) throw new ConfigError('readTextFile', 'needs at least one path');
    return this.fromSource(new TextFileSource(paths));
  }

  /**
   * Replaces every sink of the job with the one `create` returns for its uid. For the simulator,
   * which observes what a user's job commits; not part of the public API.
   * @internal
   */
  replaceSinks(create: (uid: string, name: string) => TwoPhaseCommitSink<unknown, unknown>): void {
    for (const node of this.graph.nodes) {
      if (node.kind !== 'sink') continue;
      const uid = node.uid;
      const sink = create(uid, node.name);
      node.createOperator = () => new TwoPhaseCommitSinkOperator(sink.createWriter());
      node.sink = sink;
    }
  }

  /**
   * What the job's sources leave in external systems once it ended (`Source.leftBehind`), for the
   * warnings of `weir run`.
   * @internal
   */
  leftBehindBySources(): string[] {
    const out: string[] = [];
    for (const node of this.graph.nodes) if (node.source?.leftBehind !== undefined) out.push(...node.source.leftBehind(node.uid));
    return out;
  }

  /**
   * The job graph the current definition compiles to (operators after chaining).
   * @internal
   */
  jobGraph(): JobGraph {
    return buildJobGraph(this.graph, this.options.parallelism, this.options.maxParallelism, this.options.autoWatermarkIntervalMs);
  }

  /** @internal (first, so the simulator's callbacks get their types) */
  execute(name: string, run: InternalRunOptions): Promise<JobResult>;
  /**
   * Runs the job in this process to its end and resolves with its result (status FINISHED or CANCELED).
   * @param name the job's name, in events and the default job id; default `'weir-job'`.
   * @throws JobFailedError when it fails for good (its restart strategy gave up); RestoreError or
   * ConfigError, before it starts, when `restoreFrom` cannot be used; JobDefinitionError, at once,
   * when called while `weir run` or `weir sim` imports the file as a job module (a script).
   */
  execute(name?: string, run?: RunOptions): Promise<JobResult>;
  execute(name = 'weir-job', run: InternalRunOptions = {}): Promise<JobResult> {
    refuseExecuteDuringImport(); // synchronously, so a script's job never starts under `weir run`
    return this.executeAsync(name, run).then((client) => client.result);
  }

  /** @internal (first, so the simulator's callbacks get their types) */
  executeAsync(name: string, run: InternalRunOptions): Promise<JobClient>;
  /**
   * Starts the job in this process and resolves once it runs, with a client to watch it, take
   * checkpoints and savepoints, stop or cancel it.
   * @param name the job's name, in events and the default job id; default `'weir-job'`.
   * @throws RestoreError or ConfigError when `restoreFrom` cannot be used; JobDefinitionError, at
   * once, when called while `weir run` or `weir sim` imports the file as a job module (a script).
   */
  executeAsync(name?: string, run?: RunOptions): Promise<JobClient>;
  executeAsync(name = 'weir-job', run: InternalRunOptions = {}): Promise<JobClient> {
    refuseExecuteDuringImport();
    return this.start(name, run);
  }

  private start(name: string, run: InternalRunOptions): Promise<JobClient> {
    // `weir run` and the simulator elect the leader themselves and hand its leadership in.
    const ha = run.leadership === undefined ? haSettingsOf(this.options.highAvailability, name) : null;
    if (ha !== null)
      return ownSubmission(this.jobGraph(), this.jobModulePath).then((own) => executeLed(ha, own, this.options, run, (led) => this.startHere(name, led)));
    return this.startHere(name, run);
  }

  private async startHere(name: string, run: InternalRunOptions): Promise<JobClient> {
    const job = {
      graph: this.jobGraph(),
      options: this.options,
      given: this.given,
      modulePath: this.jobModulePath,
      rebuild: (tmEnv: StreamEnvironment) => void (tmEnv.graph = this.graph),
    };
    return new LocalExecutor(job, this.options.cluster).execute(name, run);
  }

  /**
   * Where this job's subtasks run when it is executed: how many task managers (0: in the executing
   * thread) and why. The default for a job module is one per core, capped at the job's highest
   * parallelism, at least one (see `ClusterOptions.taskManagers`).
   * @internal
   */
  taskManagerCount(graph: JobGraph = this.jobGraph()): TaskManagerCount {
    return taskManagerCount(graph, this.options.cluster, this.jobModulePath);
  }

  /**
   * What a task manager in a worker thread runs this job with: the job graph, the state backends
   * and the checkpoint storage, built from the same options as the job master's.
   * @internal
   */
  taskManagerParts(id: JobId): { graph: JobGraph; backends: StateBackendFactory; storage: CheckpointStorage } {
    return { graph: this.jobGraph(), backends: stateBackendFactory(this.options.stateBackend), storage: createStorage(this.options, id, { inlineAll: true }) };
  }
}

export type { JobEvent };
