/**
 * StreamEnvironment options and their validation. Every rejection names the option at fault.
 */
import { ConfigError } from '../core/errors.ts';
import { resolveStorageLocation } from '../storage/location.ts';
import type { CheckpointingConfig } from '../checkpoint/coordinator/config.ts';
import { DEFAULT_RESTART_STRATEGY, type RestartStrategyConfig } from '../cluster/restart-strategy.ts';
import { DEFAULT_MAX_PARALLELISM, MAX_PARALLELISM_LIMIT } from '../state/key-groups.ts';

/** How and when checkpoints are taken: `StreamEnvironmentOptions.checkpointing`. Every field is optional. */
export interface CheckpointingOptions {
  /** Milliseconds between checkpoints (>= 1); omit to take only the final checkpoint of a bounded job. */
  intervalMs?: number;
  /**
   * `'exactly-once'` (default): barriers are aligned, so state reflects each record exactly once.
   * `'at-least-once'`: no alignment (lower latency); after a recovery some records count twice.
   */
  mode?: 'exactly-once' | 'at-least-once';
  /** Milliseconds a checkpoint may take before it is aborted and counted as failed; default 600000 (10 min). */
  timeoutMs?: number;
  /** Checkpoints in progress at once; default 1. */
  maxConcurrent?: number;
  /** Milliseconds between the end of one checkpoint and the start of the next; default 0. */
  minPauseMs?: number;
  /** Consecutive failed checkpoints tolerated; one more fails the job over (restart strategy). Default 3. */
  tolerableFailures?: number;
  /** Completed checkpoints kept (>= 1); older ones are deleted once subsumed. Default 1. */
  retained?: number;
  /**
   * What happens to retained checkpoints when the job is cancelled or finishes:
   * `'delete-on-cancel'` (default) or `'retain-on-cancel'` (keep them, to restart from later).
   */
  retention?: 'delete-on-cancel' | 'retain-on-cancel';
  /**
   * Unaligned checkpoints: barriers overtake queued buffers, which are persisted with the checkpoint,
   * so checkpoints finish under backpressure. Exactly-once only, with maxConcurrent 1. Default false.
   */
  unaligned?: boolean;
  /** With `unaligned`: start each checkpoint aligned and switch to unaligned after this many ms (0, the default: always unaligned). */
  alignedCheckpointTimeoutMs?: number;
}

/**
 * What happens when a task fails: by default `{ type: 'failure-rate', maxFailures: 10, intervalMs:
 * 300000, delayMs: 1000 }`, at most 10 restarts within any 5 minutes, so a job that restarts now
 * and then (a database restarted under it) keeps running and one that fails over and over stops.
 * Every restart resumes all subtasks from the latest completed checkpoint; once the strategy allows
 * no more restarts the job fails with a `JobFailedError`.
 */
export type RestartStrategyOptions =
  | {
      /** Never restart: the first failure fails the job. */
      type: 'none';
    }
  | {
      /** Up to `attempts` restarts, `delayMs` apart. */
      type: 'fixed-delay';
      /** Restarts allowed (>= 0); default 3. */
      attempts?: number;
      /** Milliseconds before each restart; default 1000. */
      delayMs?: number;
    }
  | {
      /** Up to `attempts` restarts with a delay that grows by `multiplier` after each, up to `maxDelayMs`. */
      type: 'exponential-delay';
      /** Restarts allowed (>= 0); default 10. */
      attempts?: number;
      /** Milliseconds before the first restart; default 1000. */
      initialDelayMs?: number;
      /** The longest delay in milliseconds (>= initialDelayMs); default 60000. */
      maxDelayMs?: number;
      /** Factor the delay grows by (>= 1); default 2. */
      multiplier?: number;
    }
  | {
      /**
       * At most `maxFailures` restarts within any `intervalMs`, `delayMs` apart (Flink's
       * failure-rate strategy): a restart older than `intervalMs` no longer counts, so the budget
       * comes back after a stable period. The default strategy.
       */
      type: 'failure-rate';
      /** Restarts allowed within one interval (>= 0); default 10. */
      maxFailures?: number;
      /** The sliding window in milliseconds (>= 1); default 300000 (5 minutes). */
      intervalMs?: number;
      /** Milliseconds before each restart; default 1000. */
      delayMs?: number;
    };

/**
 * Options of `StreamEnvironment.create`. Every field is optional; an unknown field or a bad value
 * is a `ConfigError` naming the option.
 */
export interface StreamEnvironmentOptions {
  /** Default number of subtasks per operator (operators may `setParallelism`); default 1, at most maxParallelism. */
  parallelism?: number;
  /**
   * Number of key groups, the unit keyed state is redistributed in: the highest parallelism any
   * restore of this job's state can use. Default 128; keep it fixed for the life of the job.
   */
  maxParallelism?: number;
  /** When and how checkpoints are taken; default: only the final checkpoint of a bounded job. */
  checkpointing?: CheckpointingOptions;
  /**
   * Where working keyed state lives: `'heap'` (default, in memory) or `'embedded'` (a local lmdb
   * store per subtask behind a bounded cache, for state larger than memory).
   */
  stateBackend?: 'heap' | 'embedded';
  /**
   * Checkpoint only what changed since the last completed checkpoint (shared files, reference
   * counted). The embedded backend only; default true there.
   */
  incremental?: boolean;
  /** Settings of the embedded backend (stateBackend: 'embedded'). */
  embeddedState?: EmbeddedStateOptions;
  /**
   * Where checkpoints are persisted: `'memory'` (default; lost with the process), a directory path
   * or a `file:` URL. Another URL scheme (`s3://...`) is a ConfigError: it is not supported yet.
   */
  checkpointStorage?: string;
  /** What happens when a task fails; default failure-rate, at most 10 restarts within 5 minutes, 1000 ms apart. */
  restartStrategy?: RestartStrategyOptions;
  /** Records per buffer on channels between subtasks; default 512. */
  bufferRecords?: number;
  /** Buffers a channel holds before its producer is backpressured; default 8. */
  channelCapacity?: number;
  /**
   * Buffers a channel between two task managers holds (its credit window); default 4 x
   * channelCapacity. It is deeper than an in-thread channel's because it must cover the time the
   * consumer's thread is off a CPU, not one turn of an event loop: with 8 buffers, workers on a
   * loaded machine sat idle a fifth of the time (BENCHMARKS.md, scaling).
   */
  remoteChannelCapacity?: number;
  /**
   * How often (ms of the job's clock) sources and `assignTimestampsAndWatermarks` ask their
   * watermark generator for a periodic watermark; default 200.
   */
  autoWatermarkIntervalMs?: number;
  /** Job id used in the checkpoint directory (letters, digits, `.`, `_`, `-`); default: the job name plus a random suffix. */
  jobId?: string;
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
  /** Heartbeats between the job master and its task managers (when subtasks run on task managers); default every 1000 ms, dead after 10000 ms. */
  heartbeat?: HeartbeatOptions;
  /**
   * Milliseconds a task manager (when subtasks run on task managers) has to stop its subtasks once the job is
   * cancelled or fails over, before its worker thread is terminated (a subtask stuck in user code
   * never returns); >= 1, default 10000. `JobClient.cancel` resolves within about this long.
   */
  cancellationTimeoutMs?: number;
}

/**
 * How the job master watches its task managers (`StreamEnvironmentOptions.heartbeat`): it sends
 * each a heartbeat every `intervalMs`, and a task manager that has not answered for `timeoutMs` is
 * declared dead: the job fails over by its restart strategy, also while it deploys or restores its
 * subtasks. Applies when subtasks run on task managers.
 */
export interface HeartbeatOptions {
  /** Milliseconds between heartbeats (>= 1); default 1000. Task managers report their figures with each answer. */
  intervalMs?: number;
  /** Milliseconds without an answer after which a task manager is dead (> intervalMs); default 10000. */
  timeoutMs?: number;
}

/** Settings of the embedded state backend: `StreamEnvironmentOptions.embeddedState`. */
export interface EmbeddedStateOptions {
  /** Where each subtask's working-state directory is created (deleted when the subtask ends); default the OS temp dir. */
  localDir?: string;
  /** Entries kept in memory per subtask and operator before the least used are written to disk; default 100000. */
  cacheEntriesMax?: number;
  /** A new full base is written once the increments since the last one pass this share of it; default 1. */
  incrementsShareMax?: number;
}

/** The heartbeat settings with their defaults applied. */
export interface ResolvedHeartbeat {
  /** Milliseconds between heartbeats. */
  readonly intervalMs: number;
  /** Milliseconds without an answer after which a task manager is dead. */
  readonly timeoutMs: number;
}

/** The embedded backend's settings with their defaults applied. */
export interface ResolvedEmbeddedState {
  /** Where working-state directories are created; null: the OS temp dir. */
  readonly localDir: string | null;
  /** Entries cached in memory per subtask and operator. */
  readonly cacheEntriesMax: number;
  /** Share of the base the increments may reach before a new base is written. */
  readonly incrementsShareMax: number;
}

/** The options an environment runs with: `StreamEnvironmentOptions` validated, with every default applied. */
export interface ResolvedOptions {
  /** Default subtasks per operator. */
  readonly parallelism: number;
  /** Key groups: the highest parallelism a restore can use. */
  readonly maxParallelism: number;
  /** Checkpoint settings. */
  readonly checkpointing: CheckpointingConfig;
  /** The state backend. */
  readonly stateBackend: 'heap' | 'embedded';
  /** Whether checkpoints are incremental. */
  readonly incremental: boolean;
  /** The embedded backend's settings. */
  readonly embeddedState: ResolvedEmbeddedState;
  /** `'memory'` or the checkpoint directory. */
  readonly checkpointStorage: string;
  /** The restart strategy. */
  readonly restartStrategy: RestartStrategyConfig;
  /** Records per buffer. */
  readonly bufferRecords: number;
  /** Buffers per channel. */
  readonly channelCapacity: number;
  /** Buffers per channel between two task managers. */
  readonly remoteChannelCapacity: number;
  /** Periodic watermark interval in milliseconds. */
  readonly autoWatermarkIntervalMs: number;
  /** The job id, or null to derive one from the job name. */
  readonly jobId: string | null;
  /**
   * Task managers as given (`'in-thread'`: all subtasks in the executing thread), or null when not
   * given: the default is decided when the job runs (one per core, see `StreamEnvironmentOptions.taskManagers`).
   */
  readonly taskManagers: number | 'in-thread' | null;
  /** Slots per task manager, or null: as many as the job needs. */
  readonly slotsPerTaskManager: number | null;
  /** Heartbeats to task managers. */
  readonly heartbeat: ResolvedHeartbeat;
  /** Milliseconds a task manager has to stop its subtasks before its worker is terminated. */
  readonly cancellationTimeoutMs: number;
}

const KNOWN_TOP = [
  'parallelism',
  'maxParallelism',
  'checkpointing',
  'stateBackend',
  'incremental',
  'embeddedState',
  'checkpointStorage',
  'restartStrategy',
  'bufferRecords',
  'channelCapacity',
  'remoteChannelCapacity',
  'autoWatermarkIntervalMs',
  'jobId',
  'taskManagers',
  'slotsPerTaskManager',
  'heartbeat',
  'cancellationTimeoutMs',
];
const KNOWN_HEARTBEAT = ['intervalMs', 'timeoutMs'];
const KNOWN_EMBEDDED = ['localDir', 'cacheEntriesMax', 'incrementsShareMax'];
const KNOWN_CHECKPOINTING = [
  'intervalMs',
  'mode',
  'timeoutMs',
  'maxConcurrent',
  'minPauseMs',
  'tolerableFailures',
  'retained',
  'retention',
  'unaligned',
  'alignedCheckpointTimeoutMs',
];

function rejectUnknown(obj: object, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) throw new ConfigError(`${prefix}${key}`, `unknown option (known: ${known.join(', ')})`);
  }
}

function int(value: unknown, option: string, min: number, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `between ${min} and ${max}`;
    throw new ConfigError(option, `must be an integer ${range}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function oneOf<T extends string>(value: unknown, option: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new ConfigError(option, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

function resolveCheckpointing(c: CheckpointingOptions | undefined): CheckpointingConfig {
  const o = c ?? {};
  if (typeof o !== 'object' || o === null) throw new ConfigError('checkpointing', 'must be an object');
  rejectUnknown(o, KNOWN_CHECKPOINTING, 'checkpointing.');
  const intervalMs = o.intervalMs === undefined ? null : int(o.intervalMs, 'checkpointing.intervalMs', 1, 0);
  const mode = oneOf(o.mode, 'checkpointing.mode', ['exactly-once', 'at-least-once'], 'exactly-once');
  const maxConcurrent = int(o.maxConcurrent, 'checkpointing.maxConcurrent', 1, 1);
  if (o.unaligned !== undefined && typeof o.unaligned !== 'boolean')
    throw new ConfigError('checkpointing.unaligned', `must be true or false, got ${JSON.stringify(o.unaligned)}`);
  const unaligned = o.unaligned ?? false;
  if (unaligned && mode !== 'exactly-once')
    throw new ConfigError('checkpointing.unaligned', "needs mode 'exactly-once' (at-least-once never aligns, so there is nothing to overtake)");
  if (unaligned && maxConcurrent !== 1) throw new ConfigError('checkpointing.unaligned', `needs maxConcurrent 1, got maxConcurrent ${maxConcurrent}`);
  if (o.alignedCheckpointTimeoutMs !== undefined && !unaligned)
    throw new ConfigError('checkpointing.alignedCheckpointTimeoutMs', 'only applies with unaligned: true');
  return {
    intervalMs,
    mode,
    unaligned,
    alignedCheckpointTimeoutMs: int(o.alignedCheckpointTimeoutMs, 'checkpointing.alignedCheckpointTimeoutMs', 0, 0),
    timeoutMs: int(o.timeoutMs, 'checkpointing.timeoutMs', 1, 600_000),
    maxConcurrent,
    minPauseMs: int(o.minPauseMs, 'checkpointing.minPauseMs', 0, 0),
    tolerableFailures: int(o.tolerableFailures, 'checkpointing.tolerableFailures', 0, 3),
    retained: int(o.retained, 'checkpointing.retained', 1, 1),
    retainOnCancel: oneOf(o.retention, 'checkpointing.retention', ['delete-on-cancel', 'retain-on-cancel'], 'delete-on-cancel') === 'retain-on-cancel',
  };
}

function resolveRestart(r: RestartStrategyOptions | undefined): RestartStrategyConfig {
  if (r === undefined) return DEFAULT_RESTART_STRATEGY;
  if (typeof r !== 'object' || r === null) throw new ConfigError('restartStrategy', 'must be an object with a type');
  const type = oneOf((r as { type?: unknown }).type, 'restartStrategy.type', ['none', 'fixed-delay', 'exponential-delay', 'failure-rate'], 'none');
  switch (type) {
    case 'none':
      rejectUnknown(r, ['type'], 'restartStrategy.');
      return { type: 'none' };
    case 'fixed-delay': {
      const f = r as Extract<RestartStrategyOptions, { type: 'fixed-delay' }>;
      rejectUnknown(f, ['type', 'attempts', 'delayMs'], 'restartStrategy.');
      return { type, attempts: int(f.attempts, 'restartStrategy.attempts', 0, 3), delayMs: int(f.delayMs, 'restartStrategy.delayMs', 0, 1000) };
    }
    case 'exponential-delay': {
      const e = r as Extract<RestartStrategyOptions, { type: 'exponential-delay' }>;
      rejectUnknown(e, ['type', 'attempts', 'initialDelayMs', 'maxDelayMs', 'multiplier'], 'restartStrategy.');
      const initialDelayMs = int(e.initialDelayMs, 'restartStrategy.initialDelayMs', 0, 1000);
      const maxDelayMs = int(e.maxDelayMs, 'restartStrategy.maxDelayMs', 0, 60_000);
      if (maxDelayMs < initialDelayMs) throw new ConfigError('restartStrategy.maxDelayMs', `must be >= initialDelayMs (${initialDelayMs}), got ${maxDelayMs}`);
      const multiplier = e.multiplier ?? 2;
      if (typeof multiplier !== 'number' || !(multiplier >= 1))
        throw new ConfigError('restartStrategy.multiplier', `must be a number >= 1, got ${JSON.stringify(multiplier)}`);
      return { type, attempts: int(e.attempts, 'restartStrategy.attempts', 0, 10), initialDelayMs, maxDelayMs, multiplier };
    }
    case 'failure-rate': {
      const f = r as Extract<RestartStrategyOptions, { type: 'failure-rate' }>;
      rejectUnknown(f, ['type', 'maxFailures', 'intervalMs', 'delayMs'], 'restartStrategy.');
      const d = DEFAULT_RESTART_STRATEGY;
      return {
        type,
        maxFailures: int(f.maxFailures, 'restartStrategy.maxFailures', 0, d.maxFailures),
        intervalMs: int(f.intervalMs, 'restartStrategy.intervalMs', 1, d.intervalMs),
        delayMs: int(f.delayMs, 'restartStrategy.delayMs', 0, d.delayMs),
      };
    }
  }
}

function resolveStateOptions(
  backend: ResolvedOptions['stateBackend'],
  options: StreamEnvironmentOptions,
): { incremental: boolean; embeddedState: ResolvedEmbeddedState } {
  if (options.incremental !== undefined && typeof options.incremental !== 'boolean') {
    throw new ConfigError('incremental', `must be true or false, got ${JSON.stringify(options.incremental)}`);
  }
  if (options.incremental === true && backend !== 'embedded') {
    throw new ConfigError('incremental', "incremental checkpoints need stateBackend: 'embedded'");
  }
  const e = options.embeddedState ?? {};
  if (typeof e !== 'object' || e === null) throw new ConfigError('embeddedState', 'must be an object');
  if (options.embeddedState !== undefined && backend !== 'embedded') throw new ConfigError('embeddedState', "applies only to stateBackend: 'embedded'");
  rejectUnknown(e, KNOWN_EMBEDDED, 'embeddedState.');
  if (e.localDir !== undefined && (typeof e.localDir !== 'string' || e.localDir.length === 0)) {
    throw new ConfigError('embeddedState.localDir', `must be a directory path, got ${JSON.stringify(e.localDir)}`);
  }
  const share = e.incrementsShareMax ?? 1;
  if (typeof share !== 'number' || !(share > 0) || !Number.isFinite(share)) {
    throw new ConfigError('embeddedState.incrementsShareMax', `must be a number > 0, got ${JSON.stringify(e.incrementsShareMax)}`);
  }
  return {
    incremental: options.incremental ?? backend === 'embedded',
    embeddedState: {
      localDir: e.localDir ?? null,
      cacheEntriesMax: int(e.cacheEntriesMax, 'embeddedState.cacheEntriesMax', 1, 100_000),
      incrementsShareMax: share,
    },
  };
}

function resolveHeartbeat(h: HeartbeatOptions | undefined): ResolvedHeartbeat {
  const o = h ?? {};
  if (typeof o !== 'object' || o === null) throw new ConfigError('heartbeat', 'must be an object');
  rejectUnknown(o, KNOWN_HEARTBEAT, 'heartbeat.');
  const intervalMs = int(o.intervalMs, 'heartbeat.intervalMs', 1, 1000);
  const timeoutMs = int(o.timeoutMs, 'heartbeat.timeoutMs', 1, Math.max(10_000, intervalMs + 1));
  if (timeoutMs <= intervalMs) throw new ConfigError('heartbeat.timeoutMs', `must be > heartbeat.intervalMs (${intervalMs}), got ${timeoutMs}`);
  return { intervalMs, timeoutMs };
}

function resolveTaskManagers(
  options: StreamEnvironmentOptions,
): Pick<ResolvedOptions, 'taskManagers' | 'slotsPerTaskManager' | 'heartbeat' | 'cancellationTimeoutMs'> {
  const given = options.taskManagers;
  if (given !== undefined && given !== 'in-thread' && !(typeof given === 'number' && Number.isInteger(given) && given >= 1 && given <= 256)) {
    throw new ConfigError('taskManagers', `must be an integer between 1 and 256 or 'in-thread', got ${JSON.stringify(given)}`);
  }
  const taskManagers = given ?? null;
  const slotsPerTaskManager = options.slotsPerTaskManager === undefined ? null : int(options.slotsPerTaskManager, 'slotsPerTaskManager', 1, 1);
  return {
    taskManagers,
    slotsPerTaskManager,
    heartbeat: resolveHeartbeat(options.heartbeat),
    cancellationTimeoutMs: int(options.cancellationTimeoutMs, 'cancellationTimeoutMs', 1, 10_000),
  };
}

/**
 * Validates options and applies the defaults.
 * @throws ConfigError naming the first option at fault.
 */
export function resolveOptions(options: StreamEnvironmentOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigError('options', 'must be an object');
  rejectUnknown(options, KNOWN_TOP, '');
  const maxParallelism = int(options.maxParallelism, 'maxParallelism', 1, DEFAULT_MAX_PARALLELISM, MAX_PARALLELISM_LIMIT);
  const parallelism = int(options.parallelism, 'parallelism', 1, 1);
  if (parallelism > maxParallelism) throw new ConfigError('parallelism', `${parallelism} exceeds maxParallelism ${maxParallelism}`);
  const stateBackend = options.stateBackend ?? 'heap';
  if (stateBackend !== 'heap' && stateBackend !== 'embedded')
    throw new ConfigError('stateBackend', `must be 'heap' or 'embedded', got ${JSON.stringify(stateBackend)}`);
  const { incremental, embeddedState } = resolveStateOptions(stateBackend, options);
  const givenStorage = options.checkpointStorage ?? 'memory';
  if (typeof givenStorage !== 'string' || givenStorage.length === 0) {
    throw new ConfigError('checkpointStorage', `must be 'memory' or a directory path, got ${JSON.stringify(givenStorage)}`);
  }
  const checkpointStorage = resolveStorageLocation(givenStorage, 'checkpointStorage');
  const jobId = options.jobId ?? null;
  if (jobId !== null && (typeof jobId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(jobId))) {
    throw new ConfigError('jobId', `must be letters, digits, '.', '_' or '-', got ${JSON.stringify(jobId)}`);
  }
  const channelCapacity = int(options.channelCapacity, 'channelCapacity', 1, 8);
  return {
    parallelism,
    maxParallelism,
    checkpointing: resolveCheckpointing(options.checkpointing),
    stateBackend,
    incremental,
    embeddedState,
    checkpointStorage,
    restartStrategy: resolveRestart(options.restartStrategy),
    bufferRecords: int(options.bufferRecords, 'bufferRecords', 1, 512),
    channelCapacity,
    remoteChannelCapacity: int(options.remoteChannelCapacity, 'remoteChannelCapacity', 1, 4 * channelCapacity),
    autoWatermarkIntervalMs: int(options.autoWatermarkIntervalMs, 'autoWatermarkIntervalMs', 1, 200),
    jobId,
    ...resolveTaskManagers(options),
  };
}
