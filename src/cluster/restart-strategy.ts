/** Restart strategies as pure decisions: given the restarts so far and the failure, restart after how long, or not. */
import { isRetryable } from '../core/errors.ts';

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
    };

export type RestartDecision = { readonly restart: true; readonly delayMs: number } | { readonly restart: false; readonly why: string };

/** `restartsSoFar` counts restarts already made in this job; a failure that is not retryable (`isRetryable`) is never restarted. */
export function decideRestart(config: RestartStrategyConfig, restartsSoFar: number, failure?: unknown): RestartDecision {
  if (failure !== undefined && !isRetryable(failure)) return { restart: false, why: 'a restart would fail the same way, so none was made' };
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
  }
}
