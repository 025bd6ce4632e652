/**
 * The option table: every option of `StreamEnvironmentOptions` as one descriptor (kind, default,
 * bounds, doc line). Validation, defaults, the messages of ConfigErrors and the resolved types come
 * from here; `options.ts` checks at compile time that its documented interfaces agree with it.
 */
import { ConfigError } from '../../core/errors.ts';
import { DEFAULT_RESTART_STRATEGY } from '../../cluster/job-master/restart-strategy.ts';
import { DEFAULT_MAX_PARALLELISM, MAX_PARALLELISM_LIMIT } from '../../state/key-groups.ts';
import { resolveStorageRoot } from '../../storage/location.ts';
import { CLUSTER_GROUP, CLUSTER_TABLE } from './cluster.ts';
import { bool, child, type Field, group, int, num, objectAt, oneOf, type ResolvedOf, resolveTable, text, union } from './fields.ts';
import { HIGH_AVAILABILITY_FIELD } from './high-availability.ts';
import { foldStateBackendShorthands, STATE_BACKEND_FIELD, STATE_BACKEND_SHORTHANDS } from './state-backend.ts';

/** The fields of `checkpointing`. */
export const CHECKPOINTING_TABLE = {
  intervalMs: int({ min: 1, default: null, defaultDoc: 'none: only the final checkpoint of a bounded job', doc: 'milliseconds between checkpoints' }),
  mode: oneOf(['exactly-once', 'at-least-once'] as const, { default: 'exactly-once', doc: 'aligned barriers (exactly-once state) or none (lower latency)' }),
  timeoutMs: int({ min: 1, default: 600_000, doc: 'milliseconds a checkpoint may take before it is aborted and counted as failed' }),
  maxConcurrent: int({ min: 1, default: 1, doc: 'checkpoints in progress at once' }),
  minPauseMs: int({ min: 0, default: 0, doc: 'milliseconds between the end of one checkpoint and the start of the next' }),
  tolerableFailures: int({ min: 0, default: 3, doc: 'consecutive failed checkpoints tolerated before the job fails over' }),
  retained: int({ min: 1, default: 1, doc: 'completed checkpoints kept' }),
  retention: oneOf(['delete-on-cancel', 'retain-on-cancel'] as const, {
    default: 'delete-on-cancel',
    doc: 'whether retained checkpoints are kept when the job is cancelled or finishes',
  }),
  unaligned: bool({ default: false, doc: 'barriers overtake queued buffers, which are persisted with the checkpoint (exactly-once, maxConcurrent 1)' }),
  alignedCheckpointTimeoutMs: int({
    min: 0,
    default: 0,
    doc: 'with unaligned: start aligned and switch to unaligned after this many ms (0: always unaligned)',
  }),
};

const CHECKPOINTING_FIELD = group(CHECKPOINTING_TABLE, {
  doc: 'when and how checkpoints are taken',
  check: (c, path, given) => {
    if (c.unaligned && c.mode !== 'exactly-once')
      throw new ConfigError(child(path, 'unaligned'), "needs mode 'exactly-once' (at-least-once never aligns, so there is nothing to overtake)");
    if (c.unaligned && c.maxConcurrent !== 1) throw new ConfigError(child(path, 'unaligned'), `needs maxConcurrent 1, got maxConcurrent ${c.maxConcurrent}`);
    if (given.alignedCheckpointTimeoutMs !== undefined && !c.unaligned)
      throw new ConfigError(child(path, 'alignedCheckpointTimeoutMs'), 'only applies with unaligned: true');
  },
  build: ({ retention, ...c }) => ({ ...c, retainOnCancel: retention === 'retain-on-cancel' }),
});

const d = DEFAULT_RESTART_STRATEGY;
/** The members of the `restartStrategy` union. */
export const RESTART_STRATEGIES = {
  none: {},
  'fixed-delay': {
    attempts: int({ min: 0, default: 3, doc: 'restarts allowed' }),
    delayMs: int({ min: 0, default: 1000, doc: 'milliseconds before each restart' }),
  },
  'exponential-delay': {
    attempts: int({ min: 0, default: 10, doc: 'restarts allowed' }),
    initialDelayMs: int({ min: 0, default: 1000, doc: 'milliseconds before the first restart' }),
    maxDelayMs: int({ min: 0, default: 60_000, doc: 'the longest delay in milliseconds; >= initialDelayMs' }),
    multiplier: num({ min: 1, default: 2, doc: 'factor the delay grows by after each restart' }),
  },
  'failure-rate': {
    maxFailures: int({ min: 0, default: d.maxFailures, doc: 'restarts allowed within one interval' }),
    intervalMs: int({ min: 1, default: d.intervalMs, doc: 'the sliding window in milliseconds' }),
    delayMs: int({ min: 0, default: d.delayMs, doc: 'milliseconds before each restart' }),
  },
};

const RESTART_STRATEGY_FIELD = union(RESTART_STRATEGIES, {
  default: { type: 'failure-rate' },
  defaultDoc: "{ type: 'failure-rate', maxFailures: 10, intervalMs: 300000, delayMs: 1000 }",
  doc: 'what happens when a task fails: none, fixed-delay, exponential-delay or failure-rate',
  check: (r, path) => {
    if (r.type === 'exponential-delay' && r.maxDelayMs < r.initialDelayMs) {
      throw new ConfigError(child(path, 'maxDelayMs'), `must be >= initialDelayMs (${r.initialDelayMs}), got ${r.maxDelayMs}`);
    }
  },
});

/** Every option a job is created with, in the order they resolve (a derived default reads the fields before it). */
export const OPTION_TABLE = {
  parallelism: int({ min: 1, default: 1, doc: 'default number of subtasks per operator; at most maxParallelism' }),
  maxParallelism: int({
    min: 1,
    max: MAX_PARALLELISM_LIMIT,
    default: DEFAULT_MAX_PARALLELISM,
    doc: 'key groups: the highest parallelism any restore of the job state can use; keep it fixed',
  }),
  checkpointing: CHECKPOINTING_FIELD,
  stateBackend: STATE_BACKEND_FIELD,
  checkpointStorage: text({
    expect: "'memory' or a directory path or a storage URL",
    parse: resolveStorageRoot,
    default: 'memory',
    doc: "where checkpoints are persisted: 'memory', a directory path, or a URL of a registered scheme (file:, memory:, s3:)",
  }),
  s3: group(
    {
      forcePathStyle: bool({
        default: false,
        doc: 'S3 checkpoint storage: address buckets as <endpoint>/<bucket> (S3-compatible servers); also env WEIR_S3_FORCE_PATH_STYLE=1',
      }),
    },
    { doc: 'how s3:// checkpoint storage reaches its endpoint (endpoint, region and credentials come from the AWS SDK: AWS_ENDPOINT_URL_S3, AWS_REGION, ...)' },
  ),
  restartStrategy: RESTART_STRATEGY_FIELD,
  bufferRecords: int({ min: 1, default: 512, doc: 'records per buffer on channels between subtasks' }),
  channelCapacity: int({ min: 1, default: 8, doc: 'buffers a channel holds before its producer is backpressured' }),
  remoteChannelCapacity: int({
    min: 1,
    default: (s) => 4 * (s.channelCapacity as number),
    defaultDoc: '4 x channelCapacity',
    doc: 'buffers a channel between two task managers holds: its credit window',
  }),
  autoWatermarkIntervalMs: int({ min: 1, default: 200, doc: 'how often sources ask their watermark generator for a periodic watermark, in ms' }),
  jobId: text({
    expect: "letters, digits, '.', '_' or '-'",
    valid: (s) => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(s),
    defaultDoc: 'the job name plus a random suffix',
    doc: 'the job id, its directory name under the checkpoint storage',
  }),
  cluster: CLUSTER_GROUP,
  highAvailability: HIGH_AVAILABILITY_FIELD,
};

/**
 * Options accepted at the top level for what now has its place in a group or union, each checked
 * under its own name and folded into its place (`taskManagers: 2` is `cluster: { taskManagers: 2 }`).
 */
export const SHORTHAND_TABLE = {
  ...STATE_BACKEND_SHORTHANDS,
  taskManagers: { ...CLUSTER_TABLE.taskManagers, doc: 'shorthand for cluster.taskManagers' },
  slotsPerTaskManager: { ...CLUSTER_TABLE.slotsPerTaskManager, doc: 'shorthand for cluster.slotsPerTaskManager' },
  heartbeat: { ...CLUSTER_TABLE.heartbeat, doc: 'shorthand for cluster.heartbeat' },
  cancellationTimeoutMs: { ...CLUSTER_TABLE.cancellationTimeoutMs, doc: 'shorthand for cluster.cancellationTimeoutMs' },
};

/** The names of every option the top level accepts, for the unknown-option message. */
const KNOWN = [...Object.keys(OPTION_TABLE), ...Object.keys(SHORTHAND_TABLE)];

/** The `cluster` group with the top-level cluster shorthands folded in, each checked under its own name. */
function foldClusterShorthands(options: Readonly<Record<string, unknown>>): unknown {
  const names = Object.keys(CLUSTER_TABLE) as Array<keyof typeof CLUSTER_TABLE>;
  if (names.every((n) => options[n] === undefined)) return options.cluster;
  const cluster: Record<string, unknown> = options.cluster === undefined ? {} : { ...objectAt(options.cluster, 'cluster') };
  for (const name of names) {
    const value = options[name];
    if (value === undefined) continue;
    (SHORTHAND_TABLE[name] as Field<unknown, unknown>).resolve(value, name, {});
    if (cluster[name] !== undefined) throw new ConfigError(name, `given twice: also as cluster.${name}; give it once`);
    cluster[name] = value;
  }
  return cluster;
}

/** What the option table resolves to. */
export type TableResolved = ResolvedOf<typeof OPTION_TABLE>;

/**
 * Validates options given at the top level (shorthands folded into their places first) and applies
 * the defaults.
 * @throws ConfigError naming the first option at fault.
 */
export function resolveOptionTable(given: unknown): TableResolved {
  const options = objectAt(given === undefined ? {} : given, '');
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw new ConfigError(key, `unknown option (known: ${KNOWN.join(', ')})`);
  }
  const canonical: Record<string, unknown> = {};
  for (const key of Object.keys(OPTION_TABLE)) canonical[key] = options[key];
  canonical.stateBackend = foldStateBackendShorthands(options);
  canonical.cluster = foldClusterShorthands(options);
  const resolved = resolveTable(OPTION_TABLE, canonical, '');
  if (resolved.parallelism > resolved.maxParallelism) {
    throw new ConfigError('parallelism', `${resolved.parallelism} exceeds maxParallelism ${resolved.maxParallelism}`);
  }
  return resolved;
}
