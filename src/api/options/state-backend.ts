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
  /** A new full base is written once the increments since the last one pass this share of it; default 1. */
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

/** Where working keyed state lives: one member per backend. */
export type StateBackendOptions = HeapStateBackendOptions | EmbeddedStateBackendOptions;

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

/** The state backend a job runs with: one member per backend, every default applied. */
export type ResolvedStateBackend = ResolvedHeapStateBackend | ResolvedEmbeddedStateBackend;

/** The embedded backend's settings, shared by the union member and the `embeddedState` shorthand. */
export const EMBEDDED_STATE_TABLE = {
  localDir: text({ expect: 'a directory path', defaultDoc: 'the OS temp dir', doc: "where each subtask's working-state directory is created" }),
  cacheEntriesMax: int({ min: 1, default: 100_000, doc: 'entries kept in memory per subtask and operator before the least used go to disk' }),
  incrementsShareMax: num({ above: 0, default: 1, doc: 'a new full base is written once the increments since the last pass this share of it' }),
};

/** The members of the `stateBackend` union, each a table of its fields besides `type`. */
export const STATE_BACKENDS = {
  heap: {},
  embedded: {
    incremental: bool({ default: true, doc: 'checkpoint only what changed since the last completed checkpoint (shared files, reference counted)' }),
    ...EMBEDDED_STATE_TABLE,
  },
};

/** The `stateBackend` option. */
export const STATE_BACKEND_FIELD = union(STATE_BACKENDS, {
  default: { type: 'heap' },
  strings: true,
  defaultDoc: "'heap'",
  doc: "where working keyed state lives: 'heap' (in memory) or 'embedded' (local lmdb store behind a bounded cache)",
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
