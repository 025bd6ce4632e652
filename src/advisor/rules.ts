/**
 * The checkpoint advisor's rules: pure functions from a job's measured figures to its situation in
 * numbers and a list of recommendations, each naming the figure and rule that led to it, the option
 * change and its cost. Thresholds are in `thresholds.ts` with their sources.
 */
import type { CheckpointFigure, JobFigures } from './figures.ts';
import * as T from './thresholds.ts';

/** The job's situation, in numbers (null: the figures do not say). */
export interface Situation {
  readonly measured: number;
  readonly completed: number;
  readonly timedOut: number;
  readonly failed: number;
  readonly timeoutShare: number;
  readonly latestStateBytes: number | null;
  /** The largest state of any checkpoint: what the size rules read (a bounded job's final checkpoint holds less). */
  readonly maxStateBytes: number | null;
  /** State growth per measured checkpoint, latest minus first divided by the count; null when unknown. */
  readonly stateGrowthBytesPerCheckpoint: number | null;
  readonly maxDurationMs: number | null;
  readonly maxInflightBytes: number | null;
  /** The longest sync phase of any checkpoint (its slowest subtask). */
  readonly maxSyncMs: number | null;
  /** The longest async phase of any checkpoint (its slowest subtask). */
  readonly maxAsyncMs: number | null;
  /** Sync time over sync plus async time, summed over the checkpoints that recorded both. */
  readonly syncShare: number | null;
  /** Async time over checkpoint time, summed over the checkpoints that recorded both. */
  readonly asyncShare: number | null;
  /** The longest alignment of any checkpoint (its slowest subtask). */
  readonly maxAlignmentMs: number | null;
  /** Alignment time over checkpoint time, summed over the checkpoints that recorded both. */
  readonly alignmentShare: number | null;
  /** Restore time of the last recovery. */
  readonly lastRestoreMs: number | null;
  readonly intervalMs: number | null;
  readonly timeoutMs: number | null;
  readonly unaligned: boolean | null;
  readonly alignedTimeoutMs: number | null;
  readonly incremental: boolean | null;
  readonly backpressureRatio: number | null;
  readonly restarts: number | null;
}

/** One recommended option change. */
export interface Recommendation {
  /** Stable name of the rule that fired. */
  readonly rule: string;
  /** The figure that led to it, in words with its number. */
  readonly because: string;
  /** The option change, in the option table's names (`checkpointing.x: value`). */
  readonly change: string;
  /** What it will cost. */
  readonly cost: string;
}

/** The advisor's answer: no advice with the count, or the situation and recommendations (empty: keep as is). */
export type Advice =
  | { readonly kind: 'too-few'; readonly measured: number; readonly needed: number; readonly source: string }
  | { readonly kind: 'advice'; readonly source: string; readonly situation: Situation; readonly recommendations: readonly Recommendation[] };

/** Applies the rules to `figures`. */
export function advise(figures: JobFigures): Advice {
  const cps = figures.checkpoints;
  if (cps.length < T.MIN_CHECKPOINTS) return { kind: 'too-few', measured: cps.length, needed: T.MIN_CHECKPOINTS, source: figures.source };
  const situation = situate(figures);
  return { kind: 'advice', source: figures.source, situation, recommendations: recommend(situation) };
}

const known = (xs: readonly (number | null)[]): number[] => xs.filter((x): x is number => x !== null);
const maxOf = (xs: readonly (number | null)[]): number | null => (known(xs).length > 0 ? Math.max(...known(xs)) : null);

/** `part / whole`, each summed over the checkpoints that recorded both; null when none did or the whole is 0. */
function shareOf(cps: readonly CheckpointFigure[], part: (c: CheckpointFigure) => number | null, whole: (c: CheckpointFigure) => number | null): number | null {
  let p = 0;
  let w = 0;
  for (const c of cps) {
    const a = part(c);
    const b = whole(c);
    if (a === null || b === null) continue;
    p += a;
    w += b;
  }
  return w > 0 ? Math.min(1, p / w) : null;
}

/** Reduces the figures to the situation. */
export function situate(f: JobFigures): Situation {
  const cps = f.checkpoints;
  const count = (s: CheckpointFigure['status']): number => cps.filter((c) => c.status === s).length;
  const states = known(cps.map((c) => c.stateBytes));
  const first = states[0];
  const last = states[states.length - 1];
  const completed = cps.filter((c) => c.status === 'completed');
  return {
    measured: cps.length,
    completed: count('completed'),
    timedOut: count('timed-out'),
    failed: count('failed'),
    timeoutShare: count('timed-out') / cps.length,
    latestStateBytes: last ?? null,
    maxStateBytes: maxOf(states),
    stateGrowthBytesPerCheckpoint: first !== undefined && last !== undefined && states.length > 1 ? (last - first) / (states.length - 1) : null,
    maxDurationMs: maxOf(cps.map((c) => c.durationMs)),
    maxInflightBytes: maxOf(cps.map((c) => c.inflightBytes)),
    maxSyncMs: maxOf(completed.map((c) => c.syncMs)),
    maxAsyncMs: maxOf(completed.map((c) => c.asyncMs)),
    syncShare: shareOf(
      completed,
      (c) => c.syncMs,
      (c) => (c.syncMs === null || c.asyncMs === null ? null : c.syncMs + c.asyncMs),
    ),
    asyncShare: shareOf(
      completed,
      (c) => c.asyncMs,
      (c) => c.durationMs,
    ),
    maxAlignmentMs: maxOf(completed.map((c) => c.alignmentMs)),
    alignmentShare: shareOf(
      completed,
      (c) => c.alignmentMs,
      (c) => c.durationMs,
    ),
    lastRestoreMs: f.lastRestoreMs,
    intervalMs: f.checkpointing.intervalMs,
    timeoutMs: f.checkpointing.timeoutMs,
    unaligned: f.checkpointing.unaligned,
    alignedTimeoutMs: f.checkpointing.alignedTimeoutMs,
    incremental: f.checkpointing.incremental,
    backpressureRatio: f.backpressureRatio,
    restarts: f.restarts,
  };
}

/** What the rules read off a situation, computed once. */
interface Reading {
  readonly s: Situation;
  /** The largest state measured. */
  readonly state: number;
  /** Backpressure at or above FREQUENT_BACKPRESSURE_RATIO. */
  readonly pressured: boolean;
  /** Aligned checkpoints spending ALIGNMENT_SHARE_MAX or more of their time aligning. */
  readonly aligning: boolean;
  /** More than TIMEOUT_SHARE_SWITCH of the checkpoints timed out. */
  readonly timingOut: boolean;
  /** The slowest checkpoint took DURATION_SHARE_OF_INTERVAL or more of the interval. */
  readonly slow: boolean;
}

type Rule = (r: Reading) => Recommendation | null;

const pct = (x: number): string => `${Math.round(x * 100)}%`;
const INCREMENTAL = "stateBackend: { type: 'embedded', incremental: true }";
const INCREMENTAL_COST =
  'state lives in an on-disk store behind a cache (slower state access per record than the heap), and a restore reads a chain of increments';
const UNALIGNED_COST = 'in-flight buffers are stored with each checkpoint (more bytes written, a slower restore that replays them)';

/** SUGGESTED_ALIGNED_TIMEOUT_MS, at most half the interval. */
const alignedTimeoutFor = (s: Situation): number => Math.min(T.SUGGESTED_ALIGNED_TIMEOUT_MS, Math.round((s.intervalMs ?? Number.POSITIVE_INFINITY) / 2));

function unalignedChange(s: Situation): string {
  return `checkpointing.unaligned: true, checkpointing.alignedCheckpointTimeoutMs: ${alignedTimeoutFor(s)}`;
}

/** Seeds: above 10 GB under frequent backpressure, or 1-10 GB with more than 10% timing out, go unaligned; Flink docs: checkpointing under backpressure. */
const unalignedUnderBackpressure: Rule = ({ s, state, pressured, aligning, timingOut, slow }) => {
  const seeds = (pressured && state > T.UNALIGNED_STATE_BYTES) || (timingOut && state >= T.ALIGNED_ENOUGH_STATE_BYTES);
  if (s.unaligned === true || !(seeds || (pressured && (timingOut || slow)))) return null;
  const why = timingOut
    ? `${s.timedOut} of ${s.measured} checkpoints (${pct(s.timeoutShare)}) timed out, above ${pct(T.TIMEOUT_SHARE_SWITCH)}`
    : `the slowest checkpoint took ${s.maxDurationMs} ms of the ${s.intervalMs} ms interval`;
  const evidence = pressured ? `, backpressure ${pct(s.backpressureRatio ?? 0)}` : aligning ? `, ${pct(s.alignmentShare ?? 0)} of it aligning` : '';
  return {
    rule: 'unaligned-under-backpressure',
    because: `${why}${evidence}: barriers wait behind queued buffers`,
    change: unalignedChange(s),
    cost: UNALIGNED_COST,
  };
};

/** Flink docs (monitoring checkpointing, checkpointing under backpressure): checkpoints that are mostly alignment go unaligned. */
const unalignedLongAlignment: Rule = (r) => {
  const { s, pressured, aligning, timingOut, slow } = r;
  if (s.unaligned === true || pressured || !aligning || !(timingOut || slow) || unalignedUnderBackpressure(r) !== null) return null;
  const why = timingOut
    ? `${s.timedOut} of ${s.measured} checkpoints timed out`
    : `the slowest checkpoint took ${s.maxDurationMs} ms of the ${s.intervalMs} ms interval`;
  return {
    rule: 'unaligned-long-alignment',
    because: `${why} and ${pct(s.alignmentShare ?? 0)} of checkpoint time went to aligning (up to ${s.maxAlignmentMs} ms), at or above ${pct(T.ALIGNMENT_SHARE_MAX)}: barriers wait behind queued buffers`,
    change: unalignedChange(s),
    cost: UNALIGNED_COST,
  };
};

/** Seeds: checkpoints that keep timing out (and restarting the job) mean state too large for the interval. */
const stateTooLarge: Rule = ({ s, pressured, aligning, timingOut }) => {
  if (!timingOut || pressured || aligning || s.maxDurationMs === null) return null;
  const target = Math.ceil((s.maxDurationMs * T.HEADROOM) / 1000) * 1000;
  return {
    rule: 'state-too-large-for-interval',
    because: `${s.timedOut} of ${s.measured} checkpoints timed out without backpressure${s.restarts ? ` and the job restarted ${s.restarts} times` : ''}: the state takes longer to write than the job allows`,
    change: `checkpointing.timeoutMs: ${target}, checkpointing.intervalMs: ${Math.max(target, s.intervalMs ?? 0)}, or ${INCREMENTAL}`,
    cost: 'a longer interval replays more input on recovery; incremental checkpoints make a restore read more files',
  };
};

/** Flink docs (tuning checkpoints): minPause when checkpoints take most of the interval; maxConcurrent when the upload is what takes long. */
const backToBack: Rule = ({ s, pressured, aligning, timingOut, slow }) => {
  if (!slow || timingOut || pressured || aligning || s.intervalMs === null || s.maxDurationMs === null) return null;
  const uploadBound = s.unaligned !== true && s.asyncShare !== null && s.asyncShare >= T.ASYNC_SHARE_FOR_CONCURRENT;
  return {
    rule: 'checkpoints-back-to-back',
    because:
      `the slowest checkpoint took ${s.maxDurationMs} ms, ${pct(s.maxDurationMs / s.intervalMs)} of the ${s.intervalMs} ms interval` +
      (uploadBound ? `, ${pct(s.asyncShare ?? 0)} of checkpoint time in the async upload` : ''),
    change: `checkpointing.minPauseMs: ${Math.ceil(s.maxDurationMs)}${uploadBound ? ', or checkpointing.maxConcurrent: 2' : ''}`,
    cost: `checkpoints are spaced further apart: more input to replay on recovery${uploadBound ? '; or, with two at once, twice the upload load at peaks' : ''}`,
  };
};

/** DESIGN.md and Flink docs: the sync phase blocks the subtask; the embedded backend's incremental snapshots keep it O(changed keys). */
const longSyncPhase: Rule = ({ s }) => {
  if (s.incremental === true || s.maxSyncMs === null || s.syncShare === null) return null;
  if (s.maxSyncMs < T.SYNC_PHASE_SLOW_MS || s.syncShare < T.SYNC_SHARE_MAX) return null;
  return {
    rule: 'long-sync-phase',
    because: `the sync phase took up to ${s.maxSyncMs} ms (${pct(s.syncShare)} of sync and async time), at or above ${T.SYNC_PHASE_SLOW_MS} ms: the subtask processes no records meanwhile`,
    change: INCREMENTAL,
    cost: INCREMENTAL_COST,
  };
};

/** Flink docs (checkpointing under backpressure): the aligned checkpoint timeout limits in-flight data to checkpoints that waited. */
const inflightHeavy: Rule = ({ s, state }) => {
  if (s.unaligned !== true || s.alignedTimeoutMs !== 0 || s.maxInflightBytes === null || state === 0) return null;
  if (s.maxInflightBytes < state * T.INFLIGHT_SHARE_OF_STATE) return null;
  return {
    rule: 'inflight-heavy',
    because: `unaligned checkpoints stored up to ${s.maxInflightBytes} bytes of in-flight buffers against ${state} bytes of state, from the first barrier on`,
    change: `checkpointing.alignedCheckpointTimeoutMs: ${alignedTimeoutFor(s)}`,
    cost: 'under backpressure a checkpoint waits up to that timeout aligned before it switches, so it finishes later',
  };
};

/** Our choice, after Flink's timeout option: a checkpoint near its timeout will time out once the state grows. */
const timeoutNear: Rule = ({ s }) => {
  if (s.timedOut > 0 || s.timeoutMs === null || s.maxDurationMs === null || s.maxDurationMs < s.timeoutMs * T.TIMEOUT_NEAR_SHARE) return null;
  return {
    rule: 'timeout-near',
    because: `the slowest checkpoint took ${s.maxDurationMs} ms, ${pct(s.maxDurationMs / s.timeoutMs)} of the ${s.timeoutMs} ms timeout`,
    change: `checkpointing.timeoutMs: ${Math.ceil((s.maxDurationMs * T.HEADROOM) / 1000) * 1000}`,
    cost: 'a checkpoint that hangs holds its resources (and blocks the next one) longer before it is aborted',
  };
};

/** Seeds: production intervals of 1-3 minutes; too long slows recovery, which costs the restore plus the replay of an interval. */
const slowRestore: Rule = ({ s }) => {
  if (s.lastRestoreMs === null || s.intervalMs === null || s.lastRestoreMs + s.intervalMs <= T.RECOVERY_TARGET_MS) return null;
  const shorter = Math.max(T.PRODUCTION_INTERVAL_MIN_MS, T.RECOVERY_TARGET_MS - s.lastRestoreMs);
  if (shorter >= s.intervalMs) return null;
  return {
    rule: 'slow-restore',
    because: `the last recovery's restore took ${s.lastRestoreMs} ms; with the ${s.intervalMs} ms interval to replay a recovery may take ${s.lastRestoreMs + s.intervalMs} ms, above ${T.RECOVERY_TARGET_MS} ms`,
    change: `checkpointing.intervalMs: ${shorter}${s.incremental === true ? '' : `, with ${INCREMENTAL} so the extra checkpoints write only what changed`}`,
    cost: `more checkpoints: more load on the job and the storage${s.incremental === true ? '' : `; ${INCREMENTAL_COST}`}`,
  };
};

/** Seeds: production intervals of 1-3 minutes. */
const intervalTooLong: Rule = ({ s }) => {
  if (s.intervalMs === null || s.intervalMs <= T.PRODUCTION_INTERVAL_MAX_MS) return null;
  return {
    rule: 'interval-too-long',
    because: `the interval is ${s.intervalMs} ms, above the 1-3 minutes that keep recovery short`,
    change: `checkpointing.intervalMs: ${T.PRODUCTION_INTERVAL_MAX_MS}`,
    cost: 'more checkpoints: more load on the job and the storage',
  };
};

/** Seeds: estimate the state size first; below 1 GB aligned full snapshots are enough, past it they write all of it every interval. */
const stateGrowing: Rule = ({ s, state }) => {
  const growth = s.stateGrowthBytesPerCheckpoint;
  if (s.incremental === true || growth === null || growth <= 0 || s.intervalMs === null || state >= T.ALIGNED_ENOUGH_STATE_BYTES) return null;
  const projected = state + growth * (T.GROWTH_HORIZON_MS / s.intervalMs);
  if (projected < T.ALIGNED_ENOUGH_STATE_BYTES) return null;
  const hours = Math.max(1, Math.round(((T.ALIGNED_ENOUGH_STATE_BYTES - state) / growth) * (s.intervalMs / 3_600_000)));
  return {
    rule: 'state-growing',
    because: `the state grows ${Math.round(growth)} bytes per checkpoint (now ${state} bytes): at this rate it passes 1 GB in about ${hours} h, and each full checkpoint writes all of it`,
    change: INCREMENTAL,
    cost: INCREMENTAL_COST,
  };
};

const RULES: readonly Rule[] = [
  unalignedUnderBackpressure,
  unalignedLongAlignment,
  stateTooLarge,
  backToBack,
  longSyncPhase,
  inflightHeavy,
  timeoutNear,
  slowRestore,
  stateGrowing,
];

/** The recommendations for a situation; empty when the checkpointing fits the job. */
export function recommend(s: Situation): Recommendation[] {
  const reading: Reading = {
    s,
    state: s.maxStateBytes ?? 0,
    pressured: s.backpressureRatio !== null && s.backpressureRatio >= T.FREQUENT_BACKPRESSURE_RATIO,
    aligning: s.unaligned !== true && s.alignmentShare !== null && s.alignmentShare >= T.ALIGNMENT_SHARE_MAX,
    timingOut: s.timeoutShare > T.TIMEOUT_SHARE_SWITCH,
    slow: s.intervalMs !== null && s.maxDurationMs !== null && s.maxDurationMs >= s.intervalMs * T.DURATION_SHARE_OF_INTERVAL,
  };
  const out = RULES.map((rule) => rule(reading)).filter((r): r is Recommendation => r !== null);
  // slow-restore already shortens the interval, to a length that also bounds recovery
  if (!out.some((r) => r.rule === 'slow-restore')) {
    const long = intervalTooLong(reading);
    if (long !== null) out.push(long);
  }
  return out;
}
