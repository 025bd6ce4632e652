/**
 * StreamEnvironment: where a job is defined and executed. Options are validated when the
 * environment is created; `execute` builds the job graph, picks the state backend and checkpoint
 * storage, and runs the job in this process until it finishes, fails or is cancelled.
 */
import { realEnvironment } from '../core/adapters.ts';
import { ConfigError } from '../core/errors.ts';
import { jobId as toJobId } from '../core/ids.ts';
import type { CompletedCheckpoint } from '../checkpoint/coordinator/completed-checkpoint.ts';
import { JobMaster, type ExecutionHooks } from '../cluster/job-master.ts';
import type { JobEvent, JobMetrics, JobResult } from '../cluster/job-events.ts';
import { IndexedSource } from '../connectors/generator/indexed-source.ts';
import { TextFileSource } from '../connectors/files/text-file-source.ts';
import { buildJobGraph, type JobGraph } from '../graph/job-graph.ts';
import { LogicalGraph } from '../graph/transformation.ts';
import { SourceReaderOperator } from '../runtime/operators/source-operator.ts';
import type { Source } from '../runtime/source.ts';
import type { TwoPhaseCommitSink } from '../runtime/sink.ts';
import { TwoPhaseCommitSinkOperator } from '../runtime/operators/sink-operators.ts';
import type { StateBackendFactory } from '../state/backend.ts';
import { HeapStateBackendFactory } from '../state/heap/heap-backend-factory.ts';
import { EmbeddedStateBackendFactory } from '../state/embedded/embedded-backend-factory.ts';
import { FsCheckpointStorage, readCheckpointMetadataAt, resolveCheckpointLocation } from '../storage/fs-storage.ts';
import { MemoryCheckpointStorage } from '../storage/memory-storage.ts';
import type { CheckpointStorage } from '../storage/storage.ts';
import { DataStream } from './data-stream.ts';
import { resolveOptions, type ResolvedOptions, type StreamEnvironmentOptions } from './options.ts';

export interface GeneratorOptions {
  /** Number of records; Infinity for an unbounded stream. */
  readonly count: number;
  /** Records per second over all subtasks; omit for as fast as possible. */
  readonly ratePerSec?: number;
  /** Seed passed to the record function, so the same seed gives the same records. */
  readonly seed?: number;
}

export interface RunOptions extends ExecutionHooks {
  /**
   * A checkpoint or savepoint directory to start from, or a job's checkpoint directory: then its
   * newest retained checkpoint that verifies, falling back to older ones as recovery does.
   */
  readonly restoreFrom?: string;
  readonly allowNonRestoredState?: boolean;
  /**
   * Restore even where a sink has committed output of a newer checkpoint than the one restored and
   * cannot roll it back, accepting that this output is committed a second time. Default false: the
   * job fails with an error naming the sink and both checkpoints.
   */
  readonly acceptDuplicates?: boolean;
  /**
   * Take ownership of the checkpoint named by `restoreFrom`: retention may delete it once newer
   * checkpoints exist. Without it the restored checkpoint is never touched.
   */
  readonly claim?: boolean;
  /** Checkpoint storage to use instead of the one the options name (the simulator's faulty storage). */
  readonly storage?: CheckpointStorage;
  /** Called with the job master before it starts (for the simulator and tests that inspect internals). */
  readonly onJobMaster?: (master: JobMaster) => void;
}

/** A job running in this process. */
export interface JobClient {
  readonly jobId: string;
  readonly result: Promise<JobResult>;
  metrics(): JobMetrics;
  cancel(): Promise<void>;
  triggerCheckpoint(): Promise<CompletedCheckpoint>;
  /** Takes a savepoint under `dir` (a directory; `memory:...` with memory storage); resolves with its location. */
  savepoint(dir: string): Promise<string>;
  /** Stop-with-savepoint: the job finishes after the savepoint committed the sinks. */
  stopWithSavepoint(dir: string): Promise<string>;
  /** Takes a savepoint, then cancels the job. */
  cancelWithSavepoint(dir: string): Promise<string>;
}

export class StreamEnvironment {
  readonly options: ResolvedOptions;
  private readonly graph = new LogicalGraph();

  private constructor(options: ResolvedOptions) {
    this.options = options;
  }

  static create(options?: StreamEnvironmentOptions): StreamEnvironment {
    return new StreamEnvironment(resolveOptions(options));
  }

  fromSource<T>(source: Source<T>, name = source.name): DataStream<T> {
    const node = this.graph.add({
      kind: 'source',
      name,
      inputs: [],
      keySelectors: [],
      createOperator: () => new SourceReaderOperator(source.createReader()),
    });
    return new DataStream<T>(this.graph, [{ node, partitioner: null }], node);
  }

  fromElements<T>(...elements: T[]): DataStream<T> {
    return this.fromCollection(elements);
  }

  fromCollection<T>(elements: readonly T[]): DataStream<T> {
    const copy = [...elements];
    return this.fromSource(new IndexedSource('collection', { count: copy.length }, (i): T => copy[i] as T)).setParallelism(1);
  }

  /** A deterministic generated stream: record i is `produce(i, seed)`. */
  generate<T>(options: GeneratorOptions, produce: (index: number, seed: number) => T): DataStream<T> {
    if (typeof options.count !== 'number' || !(options.count >= 0)) throw new ConfigError('generate.count', `must be a number >= 0 or Infinity, got ${JSON.stringify(options.count)}`);
    if (options.ratePerSec !== undefined && !(options.ratePerSec > 0)) throw new ConfigError('generate.ratePerSec', `must be > 0, got ${options.ratePerSec}`);
    const seed = options.seed ?? 0;
    return this.fromSource(new IndexedSource('generate', { count: options.count, ratePerSec: options.ratePerSec }, (i) => produce(i, seed)));
  }

  /** Lines of text files; each file is read by one subtask and its position is checkpointed. */
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

  /** The job graph the current definition compiles to (operators after chaining). */
  jobGraph(): JobGraph {
    return buildJobGraph(this.graph, this.options.parallelism, this.options.maxParallelism);
  }

  /** Runs the job to the end; rejects with JobFailedError when it fails for good. */
  async execute(name = 'weir-job', run: RunOptions = {}): Promise<JobResult> {
    const client = await this.executeAsync(name, run);
    return client.result;
  }

  async executeAsync(name = 'weir-job', run: RunOptions = {}): Promise<JobClient> {
    const graph = this.jobGraph();
    const env = run.env ?? realEnvironment();
    const id = toJobId(this.options.jobId ?? defaultJobId(name, env.random.int(0x1000000)));
    const storage = run.storage ?? this.createStorage(id);
    const restoreCandidates = run.restoreFrom ? await storage.restoreCandidates(run.restoreFrom) : [];
    if (run.claim && restoreCandidates.length === 1 && (await restoreCandidates[0]!.load()).kind === 'savepoint') {
      throw new ConfigError('claim', `${restoreCandidates[0]!.location} is a savepoint; savepoints belong to their owner and cannot be claimed`);
    }
    const master = new JobMaster(
      {
        jobId: id,
        name,
        graph,
        checkpointing: this.options.checkpointing,
        restartStrategy: this.options.restartStrategy,
        backends: this.backendFactory(),
        storage,
        bufferRecords: this.options.bufferRecords,
        channelCapacity: this.options.channelCapacity,
        restoreCandidates,
        allowNonRestoredState: run.allowNonRestoredState ?? false,
        acceptDuplicates: run.acceptDuplicates ?? false,
        claim: run.claim ?? false,
      },
      env,
      run,
    );
    run.onJobMaster?.(master);
    master.start();
    return {
      jobId: id,
      result: master.result,
      metrics: () => master.metrics(),
      cancel: () => master.cancel(),
      triggerCheckpoint: () => master.triggerCheckpoint(),
      savepoint: async (dir) => (await master.savepoint(dir)).location,
      stopWithSavepoint: async (dir) => (await master.stopWithSavepoint(dir)).location,
      cancelWithSavepoint: async (dir) => {
        const sp = await master.savepoint(dir);
        await master.cancel();
        return sp.location;
      },
    };
  }

  private backendFactory(): StateBackendFactory {
    const b = this.options.stateBackend;
    if (b === 'heap') return new HeapStateBackendFactory();
    if (b !== 'embedded') return b;
    const e = this.options.embeddedState;
    return new EmbeddedStateBackendFactory({
      ...(e.localDir === null ? {} : { localDir: e.localDir }),
      cacheEntriesMax: e.cacheEntriesMax,
      incremental: this.options.incremental,
      incrementsShareMax: e.incrementsShareMax,
    });
  }

  private createStorage(id: ReturnType<typeof toJobId>): CheckpointStorage {
    const where = this.options.checkpointStorage;
    return where === 'memory' ? new MemoryCheckpointStorage(id) : new FsCheckpointStorage(where, id);
  }
}

function defaultJobId(name: string, suffix: number): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'job';
  return `${slug}-${suffix.toString(16).padStart(6, '0')}`;
}

export type { JobEvent };
