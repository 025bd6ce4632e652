/**
 * The `stateBackend` option: a discriminated union on `type`, one member per backend, so a new
 * backend (the changelog backend wrapping another) is one member here and one case where backends
 * are built. The bare strings `'heap'` and `'embedded'` stand for `{ type }`, and the older sibling
 * options `incremental` and `embeddedState` are shorthands for fields of the embedded member.
 */
import { ConfigError } from '../../core/errors.ts';
import { bool, group, int, num, objectAt, text, union } from './fields.ts';

/** Settings of the embedded state backend: the fields of `{ type: 'embedded' }`, or `StreamEnvironmentOptions.embeddedState` (shorthand). */
export interface EmbeddedStateOptions {
  /** Where each subtask's working-state directory is created (deleted when the subtask ends); default the OS temp dir. */
  localDir?: string;
  /** Entries kept in memory per subtask and operator before the least used are written to disk; default 100000. */
  cacheEntriesMax?: number;
  /** A new full base is written once the increments since the last one pass this share of it; default 1 (0.25 as the changelog backend's `over`). */
  incrementsShareMax?: number;
}

/** Working keyed state in memory: `stateBackend: { type: 'heap' }` (or `'heap'`). */
export interface HeapStateBackendOptions {
  /** The heap backend. */
  type: 'heap';
}

/** Working keyed state in a local lmdb store per subtask behind a bounded cache, for state larger than memory: `stateBackend: { type: 'embedded', ... }` (or `'embedded'`). */
export interface EmbeddedStateBackendOptions extends EmbeddedStateOptions {
  /** The embedded backend. */
  type: 'embedded';
  /** Checkpoint only what changed since the last completed checkpoint (shared files, reference counted); default true. */
  incremental?: boolean;
}

/** A backend the changelog backend can wrap. */
export type WrappedStateBackendOptions = HeapStateBackendOptions | EmbeddedStateBackendOptions;

/**
 * Working keyed state in a wrapped backend with every change logged and uploaded continuously, so
 * a checkpoint only waits for the log's tail: `stateBackend: { type: 'changelog', over: 'embedded' }`
 * (or `'changelog'`, over the heap backend). Faster, steadier checkpoints for more storage and a
 * slower restore (see README "Choosing the changelog backend").
 */
export interface ChangelogStateBackendOptions {
  /** The changelog backend. */
  type: 'changelog';
  /** The backend that holds the working state and is materialized periodically; default 'heap'. */
  over?: WrappedStateBackendOptions | WrappedStateBackendOptions['type'];
  /** Log bytes pending in a subtask that start an upload at once; default 10 MB. */
  uploadBytesThreshold?: number;
  /** The longest a change waits before its batch is uploaded; default 10 ms. */
  uploadDelayMs?: number;
  /** Log bytes in flight per subtask beyond which the subtask takes no input; default 100 MB. */
  inFlightBytesMax?: number;
  /** Attempts per log upload before the checkpoints that need it fail; default 3. */
  uploadAttemptsMax?: number;
  /** One upload attempt's time limit; default 10000 ms. */
  uploadTimeoutMs?: number;
  /** How often the wrapped backend is snapshotted in the background, truncating the log; default 600000 ms (10 min). */
  materializationIntervalMs?: number;
  /**
   * A materialization starts before its interval once the log since the last one passes this share
   * of its size (and 1 MB), bounding what checkpoints keep and a restore replays; default 1.
   */
  materializationLogShareMax?: number;
}

/** Where working keyed state lives: one member per backend. */
export type StateBackendOptions = WrappedStateBackendOptions | ChangelogStateBackendOptions;

/** The embedded backend's settings with their defaults applied. */
export interface ResolvedEmbeddedState {
  /** Where working-state directories are created; null: the OS temp dir. */
  readonly localDir: string | null;
  /** Entries cached in memory per subtask and operator. */
  readonly cacheEntriesMax: number;
  /** Share of the base the increments may reach before a new base is written. */
  readonly incrementsShareMax: number;
}

/** The heap backend, resolved. */
export interface ResolvedHeapStateBackend {
  /** The heap backend. */
  readonly type: 'heap';
}

/** The embedded backend with its defaults applied. */
export interface ResolvedEmbeddedStateBackend extends ResolvedEmbeddedState {
  /** The embedded backend. */
  readonly type: 'embedded';
  /** Whether checkpoints are incremental. */
  readonly incremental: boolean;
}

/** A wrapped backend, resolved. */
export type ResolvedWrappedStateBackend = ResolvedHeapStateBackend | ResolvedEmbeddedStateBackend;

/** The changelog backend with its defaults applied. */
export interface ResolvedChangelogStateBackend {
  /** The changelog backend. */
  readonly type: 'changelog';
  /** The wrapped backend. */
  readonly over: ResolvedWrappedStateBackend;
  /** Pending bytes that start an upload. */
  readonly uploadBytesThreshold: number;
  /** Longest wait of a change before upload. */
  readonly uploadDelayMs: number;
  /** Bytes in flight that hold the subtask back. */
  readonly inFlightBytesMax: number;
  /** Attempts per upload. */
  readonly uploadAttemptsMax: number;
  /** One attempt's time limit. */
  readonly uploadTimeoutMs: number;
  /** Background materialization interval. */
  readonly materializationIntervalMs: number;
  /** Log share of the materialization's size that starts one early. */
  readonly materializationLogShareMax: number;
}

/** The state backend a job runs with: one member per backend, every default applied. */
export type ResolvedStateBackend = ResolvedWrappedStateBackend | ResolvedChangelogStateBackend;

/** The embedded backend's settings, shared by the union member and the `embeddedState` shorthand. */
export const EMBEDDED_STATE_TABLE = {
  localDir: text({ expect: 'a directory path', defaultDoc: 'the OS temp dir', doc: "where each subtask's working-state directory is created" }),
  cacheEntriesMax: int({ min: 1, default: 100_000, doc: 'entries kept in memory per subtask and operator before the least used go to disk' }),
  incrementsShareMax: num({ above: 0, default: 1, doc: 'a new full base is written once the increments since the last pass this share of it' }),
};

/** The backends the changelog backend wraps, each a table of its fields besides `type`. */
export const WRAPPED_STATE_BACKENDS = {
  heap: {},
  embedded: {
    incremental: bool({ default: true, doc: 'checkpoint only what changed since the last completed checkpoint (shared files, reference counted)' }),
    ...EMBEDDED_STATE_TABLE,
  },
};

const MB = 1024 * 1024;

/**
 * The wrapped embedded backend's share of increments under the changelog backend: the log already
 * holds the changes between materializations, so the wrapped backend's chain is kept short (what a
 * checkpoint keeps is the chain plus the log). Measured (BENCHMARKS.md, changelog): at 1, the mean
 * kept was 263 MB against 210 MB at 0.25, for a 108 MB state.
 */
export const CHANGELOG_WRAPPED_INCREMENTS_SHARE_MAX = 0.25;

/** The backends the changelog backend wraps, with the wrapped embedded backend's own default share. */
const CHANGELOG_WRAPPED_BACKENDS = {
  heap: WRAPPED_STATE_BACKENDS.heap,
  embedded: {
    ...WRAPPED_STATE_BACKENDS.embedded,
    incrementsShareMax: num({
      above: 0,
      default: CHANGELOG_WRAPPED_INCREMENTS_SHARE_MAX,
      doc: "a new full base is written once the increments since the last pass this share of it (under the changelog the log holds the changes between materializations, so the chain is kept shorter than the embedded backend's own default of 1)",
    }),
  },
};

/** The members of the `stateBackend` union, each a table of its fields besides `type`. */
export const STATE_BACKENDS = {
  ...WRAPPED_STATE_BACKENDS,
  changelog: {
    over: union(CHANGELOG_WRAPPED_BACKENDS, {
      default: { type: 'heap' },
      strings: true,
      defaultDoc: "'heap'",
      doc: "the backend the changelog wraps: 'heap' or 'embedded' (materialized incrementally)",
    }),
    uploadBytesThreshold: int({
      min: 1,
      default: 10 * MB,
      defaultDoc: '10 MB',
      doc: "log bytes pending in a subtask that start an upload at once (with the process's other subtasks' pending batches, in one shared file)",
    }),
    uploadDelayMs: int({
      min: 0,
      default: 10,
      doc: "the longest a change waits before its batch is uploaded; the batches of a process's subtasks ready within it share one file",
    }),
    inFlightBytesMax: int({ min: 1, default: 100 * MB, defaultDoc: '100 MB', doc: 'log bytes in flight per subtask beyond which the subtask takes no input' }),
    uploadAttemptsMax: int({ min: 1, default: 3, doc: 'attempts per log upload before the checkpoints that need it fail' }),
    uploadTimeoutMs: int({ min: 1, default: 10_000, doc: "one log upload attempt's time limit" }),
    materializationIntervalMs: int({ min: 1, default: 600_000, doc: 'how often the wrapped backend is snapshotted in the background, truncating the log' }),
    materializationLogShareMax: num({
      above: 0,
      default: 1,
      doc: 'a materialization starts before its interval once the log since the last one passes this share of its size (and 1 MB): what checkpoints keep and a restore replays stays near (1 + this) x the state',
    }),
  },
};

/** The `stateBackend` option. */
export const STATE_BACKEND_FIELD = union(STATE_BACKENDS, {
  default: { type: 'heap' },
  strings: true,
  defaultDoc: "'heap'",
  doc: "where working keyed state lives: 'heap' (in memory), 'embedded' (local lmdb store behind a bounded cache) or 'changelog' (either, with every change logged)",
});

/** The shorthand options of the embedded member, at the top level of the options. */
export const STATE_BACKEND_SHORTHANDS = {
  incremental: bool({
    default: false,
    defaultDoc: "true with stateBackend 'embedded'",
    doc: "shorthand for stateBackend: { type: 'embedded', incremental }",
  }),
  embeddedState: group(EMBEDDED_STATE_TABLE, { doc: "shorthand for the fields of stateBackend: { type: 'embedded', ... }" }),
};

/** Whether `given` (a `stateBackend` option as given) names the embedded backend. */
function namesEmbedded(given: unknown): boolean {
  const type = typeof given === 'object' && given !== null ? (given as { type?: unknown }).type : given;
  return type === 'embedded';
}

/**
 * `stateBackend` with the shorthands `incremental` and `embeddedState` folded into its embedded
 * member, each checked under its own name first (so an error names what the user wrote).
 * @throws ConfigError naming the shorthand when it is given for another backend or repeats a field.
 */
export function foldStateBackendShorthands(options: Readonly<Record<string, unknown>>): unknown {
  const given = options.stateBackend;
  const { incremental, embeddedState } = options;
  if (incremental === undefined && embeddedState === undefined) return given;
  STATE_BACKEND_SHORTHANDS.incremental.resolve(incremental, 'incremental', {});
  const embedded = namesEmbedded(given);
  if (incremental === true && !embedded) throw new ConfigError('incremental', "incremental checkpoints need stateBackend: 'embedded'");
  if (embeddedState !== undefined && !embedded) throw new ConfigError('embeddedState', "applies only to stateBackend: 'embedded'");
  STATE_BACKEND_SHORTHANDS.embeddedState.resolve(embeddedState, 'embeddedState', {});
  if (!embedded) return given; // incremental: false with the heap backend says nothing
  const member: Record<string, unknown> = typeof given === 'string' ? { type: given } : { ...objectAt(given, 'stateBackend') };
  const shorthands: Array<[string, Record<string, unknown>]> = [
    ['incremental', incremental === undefined ? {} : { incremental }],
    ['embeddedState', embeddedState === undefined ? {} : (embeddedState as Record<string, unknown>)],
  ];
  for (const [name, fields] of shorthands) {
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      if (member[key] !== undefined) {
        const option = name === 'incremental' ? name : `${name}.${key}`;
        throw new ConfigError(option, `given twice: also as stateBackend.${key}; give it once`);
      }
      member[key] = value;
    }
  }
  return member;
}
