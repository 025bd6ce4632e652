/**
 * StreamEnvironment options: the documented types a user gives and gets back. Validation, defaults
 * and messages come from the option table (`options/table.ts`); the type checks at the end of this
 * file fail to compile when these interfaces and the table disagree. Every rejection names the
 * option at fault.
 */
import type { CheckpointingConfig } from '../checkpoint/coordinator/config.ts';
import type { RestartStrategyConfig } from '../cluster/job-master/restart-strategy.ts';
import type { ClusterOptions, HeartbeatOptions, ResolvedClusterOptions } from './options/cluster.ts';
import type { GivenOf, GivenUnion, ResolvedOf, ResolvedUnion } from './options/fields.ts';
import type {
  EMBEDDED_STATE_TABLE,
  EmbeddedStateBackendOptions,
  EmbeddedStateOptions,
  ResolvedEmbeddedStateBackend,
  ResolvedStateBackend,
  STATE_BACKENDS,
  StateBackendOptions,
} from './options/state-backend.ts';
import { type CHECKPOINTING_TABLE, type OPTION_TABLE, type RESTART_STRATEGIES, resolveOptionTable, type SHORTHAND_TABLE } from './options/table.ts';
import type { CLUSTER_TABLE } from './options/cluster.ts';
import type { HIGH_AVAILABILITY } from './options/high-availability.ts';

export type { ClusterOptions, HeartbeatOptions, ResolvedClusterOptions, ResolvedHeartbeat } from './options/cluster.ts';
export type {
  ChangelogStateBackendOptions,
  EmbeddedStateBackendOptions,
  EmbeddedStateOptions,
  HeapStateBackendOptions,
  ResolvedChangelogStateBackend,
  ResolvedWrappedStateBackend,
  WrappedStateBackendOptions,
  ResolvedEmbeddedState,
  ResolvedEmbeddedStateBackend,
  ResolvedHeapStateBackend,
  ResolvedStateBackend,
  StateBackendOptions,
} from './options/state-backend.ts';

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
   * Where working keyed state lives: `{ type: 'heap' }` (default, in memory) or `{ type: 'embedded',
   * incremental?, localDir?, cacheEntriesMax?, incrementsShareMax? }` (a local lmdb store per subtask
   * behind a bounded cache, for state larger than memory). The bare strings `'heap'` and
   * `'embedded'` are shorthands for `{ type: 'heap' }` and `{ type: 'embedded' }`.
   */
  stateBackend?: StateBackendOptions | StateBackendOptions['type'];
  /**
   * Shorthand for `stateBackend: { type: 'embedded', incremental }`: checkpoint only what changed
   * since the last completed checkpoint (shared files, reference counted). The embedded backend
   * only; default true there.
   */
  incremental?: boolean;
  /** Shorthand for the fields of `stateBackend: { type: 'embedded', ... }` (with `stateBackend: 'embedded'`). */
  embeddedState?: EmbeddedStateOptions;
  /**
   * Where checkpoints are persisted, as a location of a registered storage scheme: `'memory'`
   * (default; lost with the process; shorthand for `memory:`), a directory path or a `file:` URL,
   * or `s3://bucket/prefix` (an S3-compatible bucket; see `s3`). Another URL scheme is a
   * ConfigError listing the registered schemes.
   */
  checkpointStorage?: string;
  /**
   * How `s3://` checkpoint storage reaches its endpoint. The endpoint, region and credentials are
   * the AWS SDK's: its default credential chain, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, `AWS_REGION`.
   */
  s3?: S3Options;
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
  /** Where the subtasks run and how they are watched: task managers, slots, heartbeats, the cancellation watchdog. */
  cluster?: ClusterOptions;
  /** Shorthand for `cluster.taskManagers` (see {@link ClusterOptions.taskManagers}). */
  taskManagers?: number | 'in-thread';
  /** Shorthand for `cluster.slotsPerTaskManager`. */
  slotsPerTaskManager?: number;
  /** Shorthand for `cluster.heartbeat`. */
  heartbeat?: HeartbeatOptions;
  /** Shorthand for `cluster.cancellationTimeoutMs`. */
  cancellationTimeoutMs?: number;
  /**
   * Job master high availability; default `{ type: 'none' }`. With `{ type: 'postgres', url }`
   * (or `'etcd'`), `weir run` of the job module competes for the job's lease in that store, as `--ha <url>`
   * does (the flags win): one job master leads, the others wait as standbys and take over from the
   * newest published checkpoint. `StreamEnvironment.execute` runs such a job likewise (see
   * docs/high-availability.md).
   */
  highAvailability?: HighAvailabilityOptions;
}

/**
 * Job master high availability: `StreamEnvironmentOptions.highAvailability`. The URL may carry a
 * password; Weir never prints it (logs, errors, REST and the dashboard show it as `***`).
 */
export type HighAvailabilityOptions =
  | {
      /** One job master, no HA store (the default). */
      type: 'none';
    }
  | {
      /** Leases and checkpoint pointers in PostgreSQL (`postgres`) or etcd (`etcd`). */
      type: 'postgres' | 'etcd';
      /** `postgres://user:password@host:port/db` (or `postgresql://`), or `etcd://host:port[,host:port...][?prefix=weir/ha/]`; required. */
      url: string;
      /** The job's name in the HA store, the same for every job master of the job; default the job module's name. */
      job?: string;
      /** Milliseconds of a leader's lease (>= 300); default 10000, renewed three times per lease. */
      leaseMs?: number;
    };

/** `HighAvailabilityOptions` with defaults applied. */
export type ResolvedHighAvailability =
  | {
      /** No high availability: one job master, restarted by hand (`weir run --from`). */
      readonly type: 'none';
    }
  | {
      /** A PostgreSQL HA store (a lease row with an epoch) or an etcd one (a leased key whose create revision is the epoch), with the published checkpoint pointers. */
      readonly type: 'postgres' | 'etcd';
      /** The store's URL (with its password: never print it, see `describeHaUrl`). */
      readonly url: string;
      /** The job's name in the HA store, or null: the job module's name. */
      readonly job: string | null;
      /** Milliseconds of a leader's lease. */
      readonly leaseMs: number;
    };

/** How `s3://` checkpoint storage reaches its endpoint. */
export interface S3Options {
  /**
   * Address buckets as `<endpoint>/<bucket>` instead of `<bucket>.<endpoint>`, as most
   * S3-compatible servers need; default false, or true when `WEIR_S3_FORCE_PATH_STYLE=1`.
   */
  forcePathStyle?: boolean;
}

/** `S3Options` with defaults applied. */
export interface ResolvedS3Options {
  /** Whether buckets are addressed as `<endpoint>/<bucket>` (the option; `WEIR_S3_FORCE_PATH_STYLE=1` turns it on too). */
  readonly forcePathStyle: boolean;
}

/** The options an environment runs with: `StreamEnvironmentOptions` validated, shorthands folded in, every default applied. */
export interface ResolvedOptions {
  /** Default subtasks per operator. */
  readonly parallelism: number;
  /** Key groups: the highest parallelism a restore can use. */
  readonly maxParallelism: number;
  /** Checkpoint settings. */
  readonly checkpointing: CheckpointingConfig;
  /** The state backend and its settings. */
  readonly stateBackend: ResolvedStateBackend;
  /** Where checkpoints are persisted: `'memory'`, a directory path, or a location of another registered storage scheme. */
  readonly checkpointStorage: string;
  /** How S3 checkpoint storage reaches its endpoint. */
  readonly s3: ResolvedS3Options;
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
  /** Where the subtasks run and how they are watched. */
  readonly cluster: ResolvedClusterOptions;
  /** Job master high availability. */
  readonly highAvailability: ResolvedHighAvailability;
}

/**
 * Validates options and applies the defaults.
 * @throws ConfigError naming the first option at fault.
 */
export function resolveOptions(options: StreamEnvironmentOptions = {}): ResolvedOptions {
  return resolveOptionTable(options);
}

// Compile-time checks that the documented types and the option table agree: a field added,
// removed or retyped on one side only fails `tsc` on the line below that names it.
/** Whether A and B are assignable both ways and have the same keys. */
type Agree<A, B> = [A, B] extends [B, A] ? ([keyof A, keyof B] extends [keyof B, keyof A] ? true : false) : false;
type Given = Omit<StreamEnvironmentOptions, keyof typeof SHORTHAND_TABLE>;
const agreements: {
  given: Agree<
    Omit<Given, 'checkpointing' | 'restartStrategy' | 'stateBackend' | 'cluster' | 'highAvailability'>,
    Omit<GivenOf<typeof OPTION_TABLE>, 'checkpointing' | 'restartStrategy' | 'stateBackend' | 'cluster' | 'highAvailability'>
  >;
  shorthands: Agree<Pick<StreamEnvironmentOptions, keyof typeof SHORTHAND_TABLE>, GivenOf<typeof SHORTHAND_TABLE>>;
  checkpointing: Agree<CheckpointingOptions, GivenOf<typeof CHECKPOINTING_TABLE>>;
  restartStrategy: Agree<RestartStrategyOptions, GivenUnion<typeof RESTART_STRATEGIES>>;
  stateBackend: Agree<StateBackendOptions, GivenUnion<typeof STATE_BACKENDS>>;
  embedded: Agree<EmbeddedStateOptions, GivenOf<typeof EMBEDDED_STATE_TABLE>>;
  embeddedMember: Agree<EmbeddedStateBackendOptions, Extract<GivenUnion<typeof STATE_BACKENDS>, { type: 'embedded' }>>;
  cluster: Agree<ClusterOptions, GivenOf<typeof CLUSTER_TABLE>>;
  resolved: Agree<ResolvedOptions, ResolvedOf<typeof OPTION_TABLE>>;
  resolvedBackend: Agree<ResolvedStateBackend, ResolvedUnion<typeof STATE_BACKENDS>>;
  resolvedEmbedded: Agree<ResolvedEmbeddedStateBackend, Extract<ResolvedUnion<typeof STATE_BACKENDS>, { type: 'embedded' }>>;
  resolvedCluster: Agree<ResolvedClusterOptions, ResolvedOf<typeof CLUSTER_TABLE>>;
  highAvailability: Agree<HighAvailabilityOptions, GivenUnion<typeof HIGH_AVAILABILITY>>;
  resolvedHighAvailability: Agree<ResolvedHighAvailability, ResolvedUnion<typeof HIGH_AVAILABILITY>>;
} = {
  given: true,
  shorthands: true,
  checkpointing: true,
  restartStrategy: true,
  stateBackend: true,
  embedded: true,
  embeddedMember: true,
  cluster: true,
  resolved: true,
  resolvedBackend: true,
  resolvedEmbedded: true,
  resolvedCluster: true,
  highAvailability: true,
  resolvedHighAvailability: true,
};
void agreements;
