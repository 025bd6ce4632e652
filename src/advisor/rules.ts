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
  /** State growth per measured checkpoint, latest minus first divided by the count; null when unknown. */
  readonly stateGrowthBytesPerCheckpoint: number | null;
  readonly maxDurationMs: number | null;
  readonly maxInflightBytes: number | null;
  readonly intervalMs: number | null;
  readonly timeoutMs: number | null;
  readonly unaligned: boolean | null;
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

const GB = 1024 ** 3;

/** Applies the rules to `figures`. */
export function advise(figures: JobFigures): Advice {
  const cps = figures.checkpoints;
  if (cps.length < T.MIN_CHECKPOINTS) return { kind: 'too-few', measured: cps.length, needed: T.MIN_CHECKPOINTS, source: figures.source };
  const situation = situate(figures);
  return { kind: 'advice', source: figures.source, situation, recommendations: recommend(situation) };
}

/** Reduces the figures to the situation. */
export function situate(f: JobFigures): Situation {
  const cps = f.checkpoints;
  const count = (s: CheckpointFigure['status']): number => cps.filter((c) => c.status === s).length;
  const states = cps.map((c) => c.stateBytes).filter((b): b is number => b !== null);
  const durations = cps.map((c) => c.durationMs).filter((d): d is number => d !== null);
  const inflight = cps.map((c) => c.inflightBytes).filter((b): b is number => b !== null);
  const first = states[0];
  const last = states[states.length - 1];
  return {
    measured: cps.length,
    completed: count('completed'),
    timedOut: count('timed-out'),
    failed: count('failed'),
    timeoutShare: count('timed-out') / cps.length,
    latestStateBytes: last ?? null,
    stateGrowthBytesPerCheckpoint: first !== undefined && last !== undefined && states.length > 1 ? (last - first) / (states.length - 1) : null,
    maxDurationMs: durations.length > 0 ? Math.max(...durations) : null,
    maxInflightBytes: inflight.length > 0 ? Math.max(...inflight) : null,
    intervalMs: f.checkpointing.intervalMs,
    timeoutMs: f.checkpointing.timeoutMs,
    unaligned: f.checkpointing.unaligned,
    backpressureRatio: f.backpressureRatio,
    restarts: f.restarts,
  };
}

/** The recommendations for a situation; empty when the checkpointing fits the job. */
export function recommend(s: Situation): Recommendation[] {
  const out: Recommendation[] = [];
  const state = s.latestStateBytes ?? 0;
  const pressured = s.backpressureRatio !== null && s.backpressureRatio >= T.FREQUENT_BACKPRESSURE_RATIO;
  const timingOut = s.timeoutShare > T.TIMEOUT_SHARE_SWITCH;
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  const slow = s.intervalMs !== null && s.maxDurationMs !== null && s.maxDurationMs >= s.intervalMs * T.DURATION_SHARE_OF_INTERVAL;
  const seedsUnaligned = (pressured && state > T.UNALIGNED_STATE_BYTES) || (timingOut && state >= T.ALIGNED_ENOUGH_STATE_BYTES);
  if (s.unaligned !== true && (seedsUnaligned || (pressured && (timingOut || slow)))) {
    const why = timingOut
      ? `${s.timedOut} of ${s.measured} checkpoints (${pct(s.timeoutShare)}) timed out, above ${pct(T.TIMEOUT_SHARE_SWITCH)}`
      : `the slowest checkpoint took ${s.maxDurationMs} ms of the ${s.intervalMs} ms interval`;
    out.push({
      rule: 'unaligned-under-backpressure',
      because: `${why}${pressured ? `, backpressure ${pct(s.backpressureRatio ?? 0)}` : ''}: barriers wait behind queued buffers`,
      change: `checkpointing.unaligned: true, checkpointing.alignedCheckpointTimeoutMs: ${Math.min(T.SUGGESTED_ALIGNED_TIMEOUT_MS, Math.round((s.intervalMs ?? Number.POSITIVE_INFINITY) / 2))}`,
      cost: 'in-flight buffers are stored with each checkpoint (more bytes written, a slower restore that replays them)',
    });
  }
  if (timingOut && !pressured && s.maxDurationMs !== null) {
    const target = Math.ceil((s.maxDurationMs * T.HEADROOM) / 1000) * 1000;
    out.push({
      rule: 'state-too-large-for-interval',
      because: `${s.timedOut} of ${s.measured} checkpoints timed out without backpressure${s.restarts ? ` and the job restarted ${s.restarts} times` : ''}: the state takes longer to write than the job allows`,
      change: `checkpointing.timeoutMs: ${target}, checkpointing.intervalMs: ${Math.max(target, s.intervalMs ?? 0)}, or stateBackend: { type: 'embedded', incremental: true }`,
      cost: 'a longer interval replays more input on recovery; incremental checkpoints make a restore read more files',
    });
  }
  if (slow && !timingOut && !pressured && s.intervalMs !== null && s.maxDurationMs !== null) {
    out.push({
      rule: 'checkpoints-back-to-back',
      because: `the slowest checkpoint took ${s.maxDurationMs} ms, ${pct(s.maxDurationMs / s.intervalMs)} of the ${s.intervalMs} ms interval`,
      change: `checkpointing.minPauseMs: ${Math.ceil(s.maxDurationMs)}`,
      cost: 'checkpoints are spaced further apart: more input to replay on recovery',
    });
  }
  if (s.intervalMs !== null && s.intervalMs > T.PRODUCTION_INTERVAL_MAX_MS) {
    out.push({
      rule: 'interval-too-long',
      because: `the interval is ${s.intervalMs} ms, above the 1-3 minutes that keep recovery short`,
      change: `checkpointing.intervalMs: ${T.PRODUCTION_INTERVAL_MAX_MS}`,
      cost: 'more checkpoints: more load on the job and the storage',
    });
  }
  return out;
}
