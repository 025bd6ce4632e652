/**
 * A checkpoint that was triggered and is collecting acknowledgements from every subtask. It owns
 * its lifecycle — collecting, finalizing (metadata being written), completed or aborted — with
 * the promise its requester waits on, its timeout and, for a savepoint, where it is written.
 * `metadata()` builds what is written; `finalize(location)` turns it into a CompletedCheckpoint.
 */
import { assert } from '../../core/assert.ts';
import { errorMessage, WeirError } from '../../core/errors.ts';
import type { CheckpointId, JobId, TaskId } from '../../core/ids.ts';
import { taskKey } from '../../core/ids.ts';
import type { Cancellable } from '../../core/time.ts';
import type { SavepointTarget } from '../../storage/savepoint-target.ts';
import type { CheckpointAck } from '../ack.ts';
import type { CheckpointOptions } from '../barrier/barrier.ts';
import { CHECKPOINT_FAILURE_MESSAGES, type CheckpointFailureReason } from '../failure-reason.ts';
import type { CheckpointMetadata, OperatorStateMeta, SubtaskStateMeta } from '../metadata/metadata.ts';
import type { CheckpointStats } from './checkpoint-stats.ts';
import type { CompletedCheckpoint } from './completed-checkpoint.ts';

export interface OperatorInfo {
  readonly uid: string;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
}

/**
 * Why a checkpoint did not complete; what a requester of that checkpoint is rejected with
 * (`JobClient.triggerCheckpoint`, the savepoint calls).
 */
export class CheckpointFailedError extends WeirError {
  /**
   * Creates the error.
   * @param checkpointId the checkpoint that failed.
   * @param reason why, as a code.
   * @param cause the underlying error, if any.
   */
  constructor(
    /** The checkpoint that failed. */
    readonly checkpointId: CheckpointId,
    /** Why it failed, as a code. */
    readonly reason: CheckpointFailureReason,
    cause?: unknown,
  ) {
    super('CHECKPOINT_FAILED', `checkpoint ${checkpointId} failed: ${CHECKPOINT_FAILURE_MESSAGES[reason]}${cause ? ` (${errorMessage(cause)})` : ''}`, {
      cause,
    });
  }
}

export type AckResult = 'accepted' | 'duplicate' | 'unexpected';
export type PendingState = 'collecting' | 'finalizing' | 'completed' | 'aborted';

export class PendingCheckpoint {
  private lifecycle: PendingState = 'collecting';
  private readonly notYetAcked: Set<string>;
  private readonly acks: CheckpointAck[] = [];
  private timeout: Cancellable | null = null;
  private settle!: { resolve(c: CompletedCheckpoint): void; reject(e: Error): void };
  /** Settles when the checkpoint completes (its metadata is durable) or is aborted. */
  readonly completion: Promise<CompletedCheckpoint>;

  constructor(
    readonly checkpointId: CheckpointId,
    readonly timestampMs: number,
    readonly startedAtMs: number,
    readonly options: CheckpointOptions,
    expected: readonly TaskId[],
    readonly stats: CheckpointStats,
    /** Where a savepoint is written; null for a checkpoint (the job's checkpoint storage). */
    readonly savepointTarget: SavepointTarget | null,
  ) {
    this.notYetAcked = new Set(expected.map(taskKey));
    this.completion = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.completion.catch(() => {}); // a checkpoint nobody waits on may fail quietly
  }

  get state(): PendingState {
    return this.lifecycle;
  }

  /** A stop-with-savepoint or the final checkpoint after every source ended. */
  get isFinal(): boolean {
    return this.options.isFinal;
  }

  /** Expires the checkpoint after `timeout` unless it completes first; the handle is cancelled on finalize or abort. */
  armTimeout(timeout: Cancellable): void {
    assert(this.lifecycle === 'collecting' && this.timeout === null, () => `checkpoint ${this.checkpointId}: timeout set in ${this.lifecycle}`);
    this.timeout = timeout;
  }

  acknowledge(ack: CheckpointAck): AckResult {
    assert(ack.checkpointId === this.checkpointId, 'ack for another checkpoint');
    if (this.lifecycle !== 'collecting') return 'unexpected';
    const key = taskKey(ack.task);
    if (!this.notYetAcked.delete(key)) {
      return this.acks.some((a) => taskKey(a.task) === key) ? 'duplicate' : 'unexpected';
    }
    this.acks.push(ack);
    this.stats.subtasks.push({ task: ack.task, metrics: ack.metrics });
    this.stats.persistedBytes += ack.metrics.persistedBytes + ack.metrics.channelStateBytes;
    return 'accepted';
  }

  get isFullyAcknowledged(): boolean {
    return this.notYetAcked.size === 0;
  }

  get pendingTasks(): number {
    return this.notYetAcked.size;
  }

  /** Every subtask acknowledged: stops the timeout and builds the metadata to write durably. */
  startFinalizing(jobId: JobId, operators: readonly OperatorInfo[]): CheckpointMetadata {
    assert(this.lifecycle === 'collecting', () => `checkpoint ${this.checkpointId}: finalizing in ${this.lifecycle}`);
    assert(this.isFullyAcknowledged, () => `checkpoint ${this.checkpointId} finalized with ${this.notYetAcked.size} acks missing`);
    this.lifecycle = 'finalizing';
    this.timeout?.cancel();
    return this.metadata(jobId, operators);
  }

  /** The metadata is durable at `location`: the checkpoint is complete. */
  finalize(metadata: CheckpointMetadata, location: string, nowMs: number): CompletedCheckpoint {
    assert(this.lifecycle === 'finalizing', () => `checkpoint ${this.checkpointId}: completed in ${this.lifecycle}`);
    this.lifecycle = 'completed';
    this.stats.status = 'COMPLETED';
    this.stats.durationMs = nowMs - this.startedAtMs;
    this.stats.location = location;
    const completed: CompletedCheckpoint = { checkpointId: this.checkpointId, metadata, location, kind: metadata.kind };
    this.settle.resolve(completed);
    return completed;
  }

  /** Ends the checkpoint without completing it; returns the error its requester is rejected with. */
  abort(reason: CheckpointFailureReason, nowMs: number, cause?: unknown): CheckpointFailedError {
    assert(this.lifecycle === 'collecting' || this.lifecycle === 'finalizing', () => `checkpoint ${this.checkpointId}: aborted in ${this.lifecycle}`);
    this.lifecycle = 'aborted';
    this.timeout?.cancel();
    this.stats.status = 'FAILED';
    this.stats.durationMs = nowMs - this.startedAtMs;
    this.stats.failureReason = reason;
    this.stats.failureMessage = cause === undefined ? null : errorMessage(cause);
    const error = new CheckpointFailedError(this.checkpointId, reason, cause);
    this.settle.reject(error);
    return error;
  }

  /** The metadata of this checkpoint, every operator's subtasks in order. */
  private metadata(jobId: JobId, operators: readonly OperatorInfo[]): CheckpointMetadata {
    const byUid = new Map<string, SubtaskStateMeta[]>();
    for (const ack of this.acks) {
      for (const op of ack.operators) {
        let list = byUid.get(op.uid);
        if (!list) byUid.set(op.uid, (list = []));
        list.push({ subtask: ack.task.subtask, keyed: op.keyed, operator: op.operator, channels: op.channels });
      }
    }
    const metas: OperatorStateMeta[] = operators.map((info) => {
      const subtasks = (byUid.get(info.uid) ?? []).sort((a, b) => a.subtask - b.subtask);
      assert(
        subtasks.length === info.parallelism,
        () => `checkpoint ${this.checkpointId}: uid ${info.uid} has ${subtasks.length} of ${info.parallelism} subtask states`,
      );
      return { uid: info.uid, name: info.name, parallelism: info.parallelism, maxParallelism: info.maxParallelism, subtasks };
    });
    let stateBytes = 0;
    let channelStateBytes = 0;
    let unaligned = false;
    for (const ack of this.acks) {
      stateBytes += ack.metrics.stateBytes;
      channelStateBytes += ack.metrics.channelStateBytes;
      unaligned ||= ack.metrics.unaligned;
    }
    const type = this.options.alignment === 'at-least-once' ? 'at-least-once' : unaligned ? 'unaligned' : 'aligned';
    const summary = { type, persistedBytes: this.stats.persistedBytes, stateBytes, channelStateBytes } as const;
    // In-flight data is numbered by this version's chains, which branch (metadata.ts, `chainLayout`).
    const inFlight = metas.some((op) => op.subtasks.some((s) => s.channels.length > 0));
    return {
      jobId,
      checkpointId: this.checkpointId,
      timestampMs: this.timestampMs,
      kind: this.options.kind,
      operators: metas,
      summary,
      ...(inFlight ? { chainLayout: 'tree' as const } : {}),
    };
  }
}
