/**
 * StreamEnvironment options and their validation. Every rejection names the option at fault.
 */
import { ConfigError } from '../core/errors.ts';
import type { CheckpointingConfig } from '../checkpoint/coordinator/config.ts';
import type { RestartStrategyConfig } from '../cluster/restart-strategy.ts';
import { DEFAULT_MAX_PARALLELISM, MAX_PARALLELISM_LIMIT } from '../state/key-groups.ts';
import type { StateBackendFactory } from '../state/backend.ts';

export interface CheckpointingOptions {
  /** Milliseconds between checkpoints; omit to take only the final checkpoint of a bounded job. */
  intervalMs?: number;
  mode?: 'exactly-once' | 'at-least-once';
  timeoutMs?: number;
  maxConcurrent?: number;
  minPauseMs?: number;
  tolerableFailures?: number;
  /** Completed checkpoints kept (default 1). */
  retained?: number;
  /** What happens to retained checkpoints when the job is cancelled or finishes. */
  retention?: 'delete-on-cancel' | 'retain-on-cancel';
  /**
   * Unaligned checkpoints: barriers overtake queued buffers, which are persisted with the checkpoint,
   * so checkpoints finish under backpressure. Exactly-once only, with maxConcurrent 1.
   */
  unaligned?: boolean;
  /** With `unaligned`: start each checkpoint aligned and switch to unaligned after this many ms (0: always unaligned). */
  alignedCheckpointTimeoutMs?: number;
}

export type RestartStrategyOptions =
  | { type: 'none' }
  | { type: 'fixed-delay'; attempts?: number; delayMs?: number }
  | { type: 'exponential-delay'; attempts?: number; initialDelayMs?: number; maxDelayMs?: number; multiplier?: number };

export interface StreamEnvironmentOptions {
  parallelism?: number;
  maxParallelism?: number;
  checkpointing?: CheckpointingOptions;
  /** 'heap' (default) or a custom factory. */
  stateBackend?: 'heap' | 'embedded' | StateBackendFactory;
  /**
   * Checkpoint only what changed since the last completed checkpoint (shared files, reference
   * counted). The embedded backend only; default true there.
   */
  incremental?: boolean;
  /** Settings of the embedded backend (stateBackend: 'embedded'). */
  embeddedState?: EmbeddedStateOptions;
  /** 'memory' (default) or a directory path. */
  checkpointStorage?: string;
  restartStrategy?: RestartStrategyOptions;
  /** Records per buffer on channels between subtasks. */
  bufferRecords?: number;
  /** Buffers a channel holds before its producer is backpressured. */
  channelCapacity?: number;
  /** Job id used in the checkpoint directory; derived from the job name when omitted. */
  jobId?: string;
}

export interface EmbeddedStateOptions {
  /** Where each subtask's working-state directory is created (deleted when the subtask ends); default the OS temp dir. */
  localDir?: string;
  /** Entries kept in memory per subtask and operator before the least used are written to disk; default 100000. */
  cacheEntriesMax?: number;
  /** A new full base is written once the increments since the last one pass this share of it; default 1. */
  incrementsShareMax?: number;
}

export interface ResolvedEmbeddedState {
  readonly localDir: string | null;
  readonly cacheEntriesMax: number;
  readonly incrementsShareMax: number;
}

export interface ResolvedOptions {
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly checkpointing: CheckpointingConfig;
  readonly stateBackend: 'heap' | 'embedded' | StateBackendFactory;
  readonly incremental: boolean;
  readonly embeddedState: ResolvedEmbeddedState;
  readonly checkpointStorage: string;
  readonly restartStrategy: RestartStrategyConfig;
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  readonly jobId: string | null;
}

const KNOWN_TOP = ['parallelism', 'maxParallelism', 'checkpointing', 'stateBackend', 'incremental', 'embeddedState', 'checkpointStorage', 'restartStrategy', 'bufferRecords', 'channelCapacity', 'jobId'];
const KNOWN_EMBEDDED = ['localDir', 'cacheEntriesMax', 'incrementsShareMax'];
const KNOWN_CHECKPOINTING = ['intervalMs', 'mode', 'timeoutMs', 'maxConcurrent', 'minPauseMs', 'tolerableFailures', 'retained', 'retention', 'unaligned', 'alignedCheckpointTimeoutMs'];

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
  if (o.unaligned !== undefined && typeof o.unaligned !== 'boolean') throw new ConfigError('checkpointing.unaligned', `must be true or false, got ${JSON.stringify(o.unaligned)}`);
  const unaligned = o.unaligned ?? false;
  if (unaligned && mode !== 'exactly-once') throw new ConfigError('checkpointing.unaligned', "needs mode 'exactly-once' (at-least-once never aligns, so there is nothing to overtake)");
  if (unaligned && maxConcurrent !== 1) throw new ConfigError('checkpointing.unaligned', `needs maxConcurrent 1, got maxConcurrent ${maxConcurrent}`);
  if (o.alignedCheckpointTimeoutMs !== undefined && !unaligned) throw new ConfigError('checkpointing.alignedCheckpointTimeoutMs', 'only applies with unaligned: true');
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
  if (r === undefined) return { type: 'fixed-delay', attempts: 3, delayMs: 1000 };
  if (typeof r !== 'object' || r === null) throw new ConfigError('restartStrategy', 'must be an object with a type');
  const type = oneOf((r as { type?: unknown }).type, 'restartStrategy.type', ['none', 'fixed-delay', 'exponential-delay'], 'none');
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
      if (typeof multiplier !== 'number' || !(multiplier >= 1)) throw new ConfigError('restartStrategy.multiplier', `must be a number >= 1, got ${JSON.stringify(multiplier)}`);
      return { type, attempts: int(e.attempts, 'restartStrategy.attempts', 0, 10), initialDelayMs, maxDelayMs, multiplier };
    }
  }
}

function resolveStateOptions(backend: ResolvedOptions['stateBackend'], options: StreamEnvironmentOptions): { incremental: boolean; embeddedState: ResolvedEmbeddedState } {
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
    embeddedState: { localDir: e.localDir ?? null, cacheEntriesMax: int(e.cacheEntriesMax, 'embeddedState.cacheEntriesMax', 1, 100_000), incrementsShareMax: share },
  };
}

export function resolveOptions(options: StreamEnvironmentOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigError('options', 'must be an object');
  rejectUnknown(options, KNOWN_TOP, '');
  const maxParallelism = int(options.maxParallelism, 'maxParallelism', 1, DEFAULT_MAX_PARALLELISM, MAX_PARALLELISM_LIMIT);
  const parallelism = int(options.parallelism, 'parallelism', 1, 1);
  if (parallelism > maxParallelism) throw new ConfigError('parallelism', `${parallelism} exceeds maxParallelism ${maxParallelism}`);
  const stateBackend = options.stateBackend ?? 'heap';
  if (stateBackend !== 'heap' && stateBackend !== 'embedded' && (typeof stateBackend !== 'object' || typeof stateBackend.createKeyedBackend !== 'function')) {
    throw new ConfigError('stateBackend', `must be 'heap', 'embedded' or a StateBackendFactory, got ${JSON.stringify(stateBackend)}`);
  }
  const { incremental, embeddedState } = resolveStateOptions(stateBackend, options);
  const checkpointStorage = options.checkpointStorage ?? 'memory';
  if (typeof checkpointStorage !== 'string' || checkpointStorage.length === 0) {
    throw new ConfigError('checkpointStorage', `must be 'memory' or a directory path, got ${JSON.stringify(checkpointStorage)}`);
  }
  const jobId = options.jobId ?? null;
  if (jobId !== null && (typeof jobId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(jobId))) {
    throw new ConfigError('jobId', `must be letters, digits, '.', '_' or '-', got ${JSON.stringify(jobId)}`);
  }
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
    channelCapacity: int(options.channelCapacity, 'channelCapacity', 1, 8),
    jobId,
  };
}
