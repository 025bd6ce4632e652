/**
 * Cluster settings: where a job's subtasks run and how the job master watches them (task managers,
 * slots, heartbeats, the cancellation watchdog). Their own options group (`cluster`), apart from
 * what a job computes: the executor reads them, the job graph never does.
 */
import { ConfigError } from '../../core/errors.ts';
import { child, group, int } from './fields.ts';

/**
 * How the job master watches its task managers (`ClusterOptions.heartbeat`): it sends each a
 * heartbeat every `intervalMs`, and a task manager that has not answered for `timeoutMs` is
 * declared dead: the job fails over by its restart strategy, also while it deploys or restores its
 * subtasks. Applies when subtasks run on task managers.
 */
export interface HeartbeatOptions {
  /** Milliseconds between heartbeats (>= 1); default 1000. Task managers report their figures with each answer. */
  intervalMs?: number;
  /** Milliseconds without an answer after which a task manager is dead (> intervalMs); default 10000. */
  timeoutMs?: number;
  /**
   * Milliseconds from the deploy within which a task manager must say hello (its worker thread or
   * process answering for the first time); one silent that long is dead. Default 30000, at least
   * timeoutMs. Starting a thread is not counted against `timeoutMs`, but a task manager that dies
   * before its first answer must still be found.
   */
  startTimeoutMs?: number;
}

/**
 * Where the subtasks of a job run and how they are watched: `StreamEnvironmentOptions.cluster`.
 * Every field is optional. The same fields at the top level of the options (`taskManagers: 2`) are
 * accepted as shorthands; giving one both ways is a ConfigError.
 */
export interface ClusterOptions {
  /**
   * Where the subtasks run: task managers, each a worker thread hosting subtasks in slots (1-256),
   * or `'in-thread'`.
   *
   * A job run from a job module (`weir run`, or `setJobModule`) runs on task managers, whose
   * default export every task manager calls to build the same job graph. That is what keeps the
   * control plane answering when a user function never returns: the job master's thread (which
   * serves `weir cancel`, the REST API and the dashboard) runs no user code, and a task manager
   * that does not stop within `cancellationTimeoutMs` is terminated. Default: one task manager per
   * core (`os.availableParallelism()`), at most the job's highest parallelism (more if
   * `slotsPerTaskManager` needs them), and at least one, also at parallelism 1. With `'memory'`
   * checkpoint storage, task managers keep all their state inline in the checkpoint metadata.
   *
   * Every subtask runs in the thread that executes the job (no such guarantee: a user function that
   * never returns blocks cancellation and everything else on that thread) for a plain script
   * calling `execute` (no job module a worker could load; a script asking for more than one task
   * manager is told so), a job with a `CollectSink` (its results live in this thread), and
   * `'in-thread'`, which asks for it explicitly, for example to measure without worker threads.
   */
  taskManagers?: number | 'in-thread';
  /**
   * Slots per task manager (>= 1): each slot holds subtask i of every operator, so taskManagers x
   * slotsPerTaskManager must reach the job's highest parallelism. Default: as many as needed.
   */
  slotsPerTaskManager?: number;
  /** Heartbeats between the job master and its task managers (when subtasks run on task managers); default every 1000 ms, dead after 10000 ms (30000 ms before the first answer). */
  heartbeat?: HeartbeatOptions;
  /**
   * Milliseconds a task manager (when subtasks run on task managers) has to stop its subtasks once the job is
   * cancelled or fails over, before its worker thread is terminated (a subtask stuck in user code
   * never returns); >= 1, default 10000. `JobClient.cancel` resolves within about this long.
   */
  cancellationTimeoutMs?: number;
}

/** The heartbeat settings with their defaults applied. */
export interface ResolvedHeartbeat {
  /** Milliseconds between heartbeats. */
  readonly intervalMs: number;
  /** Milliseconds without an answer after which a task manager is dead. */
  readonly timeoutMs: number;
  /** Milliseconds from the deploy within which a task manager must say hello. */
  readonly startTimeoutMs: number;
}

/** The cluster settings with their defaults applied: what the executor deploys a job with. */
export interface ResolvedClusterOptions {
  /**
   * Task managers as given (`'in-thread'`: all subtasks in the executing thread), or null when not
   * given: the default is decided when the job runs (one per core, see `ClusterOptions.taskManagers`).
   */
  readonly taskManagers: number | 'in-thread' | null;
  /** Slots per task manager, or null: as many as the job needs. */
  readonly slotsPerTaskManager: number | null;
  /** Heartbeats to task managers. */
  readonly heartbeat: ResolvedHeartbeat;
  /** Milliseconds a task manager has to stop its subtasks before its worker is terminated. */
  readonly cancellationTimeoutMs: number;
}

const HEARTBEAT = {
  intervalMs: int({ min: 1, default: 1000, doc: 'milliseconds between heartbeats to each task manager' }),
  timeoutMs: int({
    min: 1,
    default: (s) => Math.max(10_000, (s.intervalMs as number) + 1),
    defaultDoc: '10000 (at least intervalMs + 1)',
    doc: 'milliseconds without an answer after which a task manager is dead; > intervalMs',
  }),
  startTimeoutMs: int({
    min: 1,
    default: (s) => Math.max(30_000, s.timeoutMs as number),
    defaultDoc: '30000 (at least timeoutMs)',
    doc: 'milliseconds from the deploy within which a task manager must first answer (say hello); one silent that long is dead',
  }),
};

/** The cluster options, one descriptor each. */
export const CLUSTER_TABLE = {
  taskManagers: int({
    min: 1,
    max: 256,
    or: ['in-thread'] as const,
    default: null,
    defaultDoc: 'one per core, at most the highest parallelism, at least 1 (a job module); else in-thread',
    doc: "task managers (worker threads) the subtasks run in, or 'in-thread': every subtask in the executing thread (no watchdog)",
  }),
  slotsPerTaskManager: int({
    min: 1,
    default: null,
    defaultDoc: 'as many as the job needs',
    doc: 'slots per task manager; taskManagers x slots must reach the highest parallelism',
  }),
  heartbeat: group(HEARTBEAT, {
    doc: 'how the job master watches its task managers',
    check: (h, path) => {
      if (h.timeoutMs <= h.intervalMs)
        throw new ConfigError(child(path, 'timeoutMs'), `must be > ${child(path, 'intervalMs')} (${h.intervalMs}), got ${h.timeoutMs}`);
    },
  }),
  cancellationTimeoutMs: int({
    min: 1,
    default: 10_000,
    doc: 'milliseconds a task manager has to stop its subtasks on cancel or failover before its worker is terminated',
  }),
};

/** The `cluster` option: the group of `CLUSTER_TABLE`. */
export const CLUSTER_GROUP = group(CLUSTER_TABLE, { doc: 'where the subtasks run and how they are watched (task managers, slots, heartbeats, watchdog)' });
