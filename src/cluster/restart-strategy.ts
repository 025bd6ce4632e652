/** Restart strategies as pure decisions: given the restarts so far, restart after how long, or not. */
export type RestartStrategyConfig =
  | { readonly type: 'none' }
  | { readonly type: 'fixed-delay'; readonly attempts: number; readonly delayMs: number }
  | { readonly type: 'exponential-delay'; readonly attempts: number; readonly initialDelayMs: number; readonly maxDelayMs: number; readonly multiplier: number };

export type RestartDecision = { readonly restart: true; readonly delayMs: number } | { readonly restart: false; readonly why: string };

/** `restartsSoFar` counts restarts already made in this job. */
export function decideRestart(config: RestartStrategyConfig, restartsSoFar: number): RestartDecision {
  switch (config.type) {
    case 'none':
      return { restart: false, why: "restartStrategy is 'none'" };
    case 'fixed-delay':
      if (restartsSoFar >= config.attempts) return { restart: false, why: `restartStrategy fixed-delay allows ${config.attempts} restarts and all were used` };
      return { restart: true, delayMs: config.delayMs };
    case 'exponential-delay': {
      if (restartsSoFar >= config.attempts) return { restart: false, why: `restartStrategy exponential-delay allows ${config.attempts} restarts and all were used` };
      const delayMs = Math.min(config.maxDelayMs, config.initialDelayMs * Math.pow(config.multiplier, restartsSoFar));
      return { restart: true, delayMs };
    }
  }
}
