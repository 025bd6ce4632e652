/**
 * The advisor's thresholds, each with its source. "Seeds" are the project's seed notes
 * (/work/shared/seeds/, the rules of thumb at their end); Flink's documentation is cited where it
 * states the same rule.
 */

/** Fewer measured checkpoints than this give no advice: one or two say nothing about a rate or a trend (our choice). */
export const MIN_CHECKPOINTS = 5;

/** Seeds: below 1 GB of state aligned checkpoints are enough. */
export const ALIGNED_ENOUGH_STATE_BYTES = 1024 ** 3;

/** Seeds: above 10 GB of state with frequent backpressure, go unaligned. */
export const UNALIGNED_STATE_BYTES = 10 * 1024 ** 3;

/** Seeds: between 1 and 10 GB, try aligned first and switch once more than 10% of checkpoints time out. */
export const TIMEOUT_SHARE_SWITCH = 0.1;

/**
 * Backpressure counts as frequent from this ratio: Flink's web UI calls a task's backpressure HIGH
 * above 0.5 of the time (Flink docs, "Monitoring Back Pressure").
 */
export const FREQUENT_BACKPRESSURE_RATIO = 0.5;

/** Seeds: production intervals of 1 to 3 minutes; shorter loads the job, longer slows recovery. */
export const PRODUCTION_INTERVAL_MIN_MS = 60_000;
/** Seeds: see PRODUCTION_INTERVAL_MIN_MS. */
export const PRODUCTION_INTERVAL_MAX_MS = 180_000;

/**
 * A checkpoint whose duration reaches this share of the interval leaves the job no time between
 * checkpoints: Flink's docs ("Tuning Checkpoints and Large State") advise minPause for this case.
 */
export const DURATION_SHARE_OF_INTERVAL = 0.5;

/** A new timeout or interval is this multiple of the slowest measured checkpoint (our choice: headroom for growth). */
export const HEADROOM = 2;

/**
 * With unaligned checkpoints, start aligned and switch after this long (Flink docs, "Checkpointing
 * under backpressure": aligned checkpoint timeout); at most half the interval, so a checkpoint
 * switches within its interval (our choice).
 */
export const SUGGESTED_ALIGNED_TIMEOUT_MS = 30_000;
