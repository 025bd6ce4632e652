/** Restart strategies as pure decisions: given the restarts so far, the time now and the failure, restart after how long, or not. */
import { isRetryable } from '../../core/errors.ts';

/** A restart strategy with its defaults applied (see `RestartStrategyOptions` for the meaning of each field). */
export type RestartStrategyConfig =
  | {
      /** Never restart. */
      readonly type: 'none';
    }
  | {
      /** A fixed delay between restarts. */
      readonly type: 'fixed-delay';
      /** Restarts allowed. */
      readonly attempts: number;
      /** Milliseconds before each restart. */
      readonly delayMs: number;
    }
  | {
      /** A delay that grows by `multiplier` after each restart. */
      readonly type: 'exponential-delay';
      /** Restarts allowed. */
      readonly attempts: number;
      /** Milliseconds before the first restart. */
      readonly initialDelayMs: number;
      /** The longest delay, in milliseconds. */
      readonly maxDelayMs: number;
      /** Factor the delay grows by. */
      readonly multiplier: number;
    }
  | {
      /** At most `maxFailures` restarts within any `intervalMs` (Flink's failure-rate strategy). */
      readonly type: 'failure-rate';
      /** Restarts allowed within one interval. */
      readonly maxFailures: number;
      /** Length of the sliding window, in milliseconds: a restart older than this no longer counts. */
      readonly intervalMs: number;
      /** Milliseconds before each restart. */
      readonly delayMs: number;
    };

/** The failure-rate strategy `StreamEnvironment` uses when `restartStrategy` is not given. */
export const DEFAULT_RESTART_STRATEGY: Extract<RestartStrategyConfig, { readonly type: 'failure-rate' }> = {
  type: 'failure-rate',
  maxFailures: 10,
  intervalMs: 300_000,
  delayMs: 1000,
};

/** What a decision looks at: the restarts this job made so far. */
export interface RestartHistory {
  /** Restarts already made in this job. */
  readonly restartsSoFar: number;
  /** `Clock.now()` of the restarts made so far, oldest first (only the newest `maxFailures` matter). */
  readonly restartTimesMs: readonly number[];
}

export type RestartDecision = { readonly restart: true; readonly delayMs: number } | { readonly restart: false; readonly why: string };

/**
 * Decides whether a failure at `nowMs` (the job's `Clock.now()`) restarts the job, and after how
 * long; a failure that is not retryable (`isRetryable`) is never restarted.
 */
export function decideRestart(config: RestartStrategyConfig, history: RestartHistory, nowMs: number, failure?: unknown): RestartDecision {
  if (failure !== undefined && !isRetryable(failure)) return { restart: false, why: 'a restart would fail the same way, so none was made' };
  const { restartsSoFar } = history;
  switch (config.type) {
    case 'none':
      return { restart: false, why: "restartStrategy is 'none'" };
    case 'fixed-delay':
      if (restartsSoFar >= config.attempts) return { restart: false, why: `restartStrategy fixed-delay allows ${config.attempts} restarts and all were used` };
      return { restart: true, delayMs: config.delayMs };
    case 'exponential-delay': {
      if (restartsSoFar >= config.attempts)
        return { restart: false, why: `restartStrategy exponential-delay allows ${config.attempts} restarts and all were used` };
      const delayMs = Math.min(config.maxDelayMs, config.initialDelayMs * Math.pow(config.multiplier, restartsSoFar));
      return { restart: true, delayMs };
    }
    case 'failure-rate': {
      const recent = restartsWithin(history.restartTimesMs, nowMs, config.intervalMs);
      if (recent >= config.maxFailures)
        return {
          restart: false,
          why: `restartStrategy failure-rate allows ${config.maxFailures} restarts within ${config.intervalMs} ms and ${recent} were made in the last ${config.intervalMs} ms`,
        };
      return { restart: true, delayMs: config.delayMs };
    }
  }
}

/** How many of `timesMs` lie within the `intervalMs` before `nowMs` (a restart exactly `intervalMs` ago no longer counts). */
function restartsWithin(timesMs: readonly number[], nowMs: number, intervalMs: number): number {
  let n = 0;
  for (const t of timesMs) if (nowMs - t < intervalMs) n++;
  return n;
}

/** The restart times a job keeps: the newest `maxFailures` (older ones cannot change a decision), so the list stays bounded. */
export function restartTimesToKeep(config: RestartStrategyConfig): number {
  return config.type === 'failure-rate' ? config.maxFailures : 0;
}
