/** Validated checkpointing settings as the coordinator and tasks use them. */
export interface CheckpointingConfig {
  /** null: no periodic checkpoints (the final checkpoint of a bounded job is still taken). */
  readonly intervalMs: number | null;
  /** Aligned exactly-once, or at-least-once without alignment. */
  readonly mode: 'exactly-once' | 'at-least-once';
  /** Milliseconds before a checkpoint in progress is aborted. */
  readonly timeoutMs: number;
  /** Checkpoints in progress at once. */
  readonly maxConcurrent: number;
  /** Milliseconds between the end of one checkpoint and the start of the next. */
  readonly minPauseMs: number;
  /** Consecutive checkpoint failures tolerated; one more fails the job over. */
  readonly tolerableFailures: number;
  /** Completed checkpoints kept. */
  readonly retained: number;
  /** Keep retained checkpoints when the job is cancelled or finishes. */
  readonly retainOnCancel: boolean;
  /** Barriers overtake in-flight data, which is persisted with the checkpoint (exactly-once only). */
  readonly unaligned: boolean;
  /** With unaligned: start aligned and switch when alignment takes longer (0: always unaligned). */
  readonly alignedCheckpointTimeoutMs: number;
}
