/**
 * What an in-memory task manager builds its context from: the same plain data a task manager in
 * a worker thread or another process gets (the job's builder, the options it ran with, the job id
 * and the checkpoint storage's URL), never the job master's objects. Each builds its own job graph
 * by running the job's builder against a new StreamEnvironment, opens its own storage client from
 * the URL, and writes each checkpoint through its own stream factory (a savepoint into the target
 * its barrier names), as `api/task-manager-worker-job.ts` does in a worker thread. What stays
 * shared is the thread's world: the clock and scheduler, and the simulator's fault injector.
 */
import type { TaskManagerContext } from '../cluster/task-manager/task-manager.ts';
import { taskManagerContext } from '../cluster/task-manager/task-manager-context.ts';
import { errorMessage, JobFailedError } from '../core/errors.ts';
import type { JobId } from '../core/ids.ts';
import type { Environment } from '../core/time.ts';
import type { FaultInjector } from '../runtime/faults.ts';
import type { StateBackendFactory } from '../state/backend.ts';
import { isMemoryStoreUrl, openMemoryStorageClient } from '../storage/memory-stores.ts';
import type { CheckpointStorage } from '../storage/storage.ts';
import { StreamEnvironment } from './environment.ts';
import type { StreamEnvironmentOptions } from './options.ts';

/** Everything an in-memory task manager is given. */
export interface InMemoryTaskManagerJob {
  /** Builds the job on an environment, as a job module's default export does. */
  readonly build: (env: StreamEnvironment) => void | Promise<void>;
  /** The options the job master's environment was created with (as given, not resolved). */
  readonly options: StreamEnvironmentOptions;
  readonly jobId: JobId;
  /** Where checkpoints go: `memory://<store>` (an in-process store) or the checkpoint directory. */
  readonly storageUrl: string;
  /** Opens the storage client from the URL (the simulator: a client with its storage faults); default a plain client. */
  readonly openStorage?: (url: string, index: number) => CheckpointStorage;
  /** Wraps the state backends the options name (the simulator's late async snapshot parts). */
  readonly wrapBackends?: (backends: StateBackendFactory) => StateBackendFactory;
  readonly env: Environment;
  /**
   * Ms task manager `index`'s clock runs ahead of the job master's (negative: behind), as on
   * another host: its stamps (barrier arrivals, sync starts, heartbeat answers, materializations)
   * read a clock shifted by that much, `wallNow` and `now` alike (another process's monotonic clock
   * has another origin); its scheduler stays the thread's. Tests and the simulator only. Default: none.
   */
  readonly clockSkewMs?: (index: number) => number;
  readonly faults: FaultInjector;
  readonly allowNonRestoredState: boolean;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
}

/**
 * Task manager `index`'s context, built from `job` alone; at once when the builder is synchronous
 * (no turn of the event loop in between, so a seeded run's order of events does not depend on it).
 * @throws JobFailedError naming the task manager when the job cannot be built (not retried).
 */
export function buildInMemoryTaskManagerContext(index: number, job: InMemoryTaskManagerJob): TaskManagerContext | Promise<TaskManagerContext> {
  const failed = (err: unknown) => new JobFailedError(`in-memory task manager ${index} cannot build the job: ${errorMessage(err)}`, { cause: err });
  let env: StreamEnvironment;
  let built: void | Promise<void>;
  try {
    env = StreamEnvironment.create(job.options);
    built = job.build(env);
  } catch (err) {
    throw failed(err);
  }
  const context = (): TaskManagerContext => {
    try {
      return contextOf(index, job, env);
    } catch (err) {
      throw failed(err);
    }
  };
  return built instanceof Promise ? built.then(context, (err: unknown) => Promise.reject(failed(err))) : context();
}

function contextOf(index: number, job: InMemoryTaskManagerJob, env: StreamEnvironment): TaskManagerContext {
  const parts = env.taskManagerParts(job.jobId);
  const storage = job.openStorage
    ? job.openStorage(job.storageUrl, index)
    : isMemoryStoreUrl(job.storageUrl)
      ? openMemoryStorageClient(job.storageUrl, job.jobId)
      : parts.storage;
  const backends = job.wrapBackends ? job.wrapBackends(parts.backends) : parts.backends;
  const skewMs = job.clockSkewMs?.(index) ?? 0;
  const run = skewMs === 0 ? job : { ...job, env: skewed(job.env, skewMs) };
  return taskManagerContext(index, { graph: parts.graph, backends, storage }, env.options, run);
}

/**
 * The environment with its clock `skewMs` ahead, wall and monotonic time (another process's
 * monotonic clock has another origin); the same scheduler and random.
 */
function skewed(env: Environment, skewMs: number): Environment {
  const { clock } = env;
  return { clock: { now: () => clock.now() + skewMs, wallNow: () => clock.wallNow() + skewMs }, scheduler: env.scheduler, random: env.random };
}
