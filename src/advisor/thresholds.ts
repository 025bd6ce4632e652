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

/**
 * Alignment counts as the bulk of a checkpoint from this share of checkpoint time spent aligning
 * (sum of the slowest subtask's alignment over the sum of durations): Flink's docs ("Monitoring
 * Checkpointing": alignment duration; "Checkpointing under backpressure") name long alignment as
 * barriers waiting behind buffers, fixed by unaligned checkpoints. The share is our choice.
 */
export const ALIGNMENT_SHARE_MAX = 0.5;

/**
 * A sync phase from this long is a visible pause of the subtask's records (our choice). Design
 * invariant (DESIGN.md, State): the sync phase costs O(1) or O(changed keys), never O(state size);
 * Flink's docs ("Monitoring Checkpointing"): the sync duration blocks all other work of the subtask.
 */
export const SYNC_PHASE_SLOW_MS = 100;

/** The sync phase counts as long when it is at least this share of sync plus async time (our choice). */
export const SYNC_SHARE_MAX = 0.5;

/**
 * When the async phase (the upload) is at least this share of checkpoint time, overlapping
 * checkpoints with `maxConcurrent` helps where spacing them with `minPauseMs` would lengthen
 * recovery (Flink docs, "Checkpointing": max concurrent checkpoints); the share is our choice.
 */
export const ASYNC_SHARE_FOR_CONCURRENT = 0.5;

/**
 * Seeds: intervals longer than 1-3 minutes slow recovery. A recovery costs the restore plus the
 * replay of up to one interval; we hold the sum to the seeds' longest interval.
 */
export const RECOVERY_TARGET_MS = PRODUCTION_INTERVAL_MAX_MS;

/** A checkpoint that took this share of the timeout has little headroom left before it times out (our choice). */
export const TIMEOUT_NEAR_SHARE = 0.8;

/**
 * Unaligned checkpoints whose in-flight bytes reach this multiple of the state store more buffers
 * than state: Flink's docs ("Checkpointing under backpressure") note unaligned checkpoints add
 * in-flight data to every checkpoint and recommend the aligned checkpoint timeout, so only
 * checkpoints that wait long persist buffers. The multiple is our choice.
 */
export const INFLIGHT_SHARE_OF_STATE = 1;

/**
 * Seeds: estimate the state size first; below 1 GB aligned is enough. State growing past that line
 * within this horizon at its measured rate argues for incremental checkpoints before it gets there
 * (our choice: one day).
 */
export const GROWTH_HORIZON_MS = 24 * 60 * 60 * 1000;
