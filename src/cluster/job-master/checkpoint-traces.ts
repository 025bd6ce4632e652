/**
 * What the job master records of each checkpoint for the REST API and the dashboard's barrier
 * flow: when it was triggered, each subtask's acknowledgement with the figures the subtask sent
 * (barrier arrival per input channel, sync start, sync and async durations, alignment, bytes),
 * and when the notifications went out. Bounded: traces of checkpoints that are neither retained,
 * in progress nor among the few newest failed ones are dropped. Every time here is on the job
 * master's clock: a task manager's stamps were moved by its clock offset before its ack got here.
 */
import type { CheckpointAck, SubtaskCheckpointMetrics } from '../../checkpoint/ack.ts';
import type { CheckpointBarrier, CheckpointOptions } from '../../checkpoint/barrier/barrier.ts';
import type { CheckpointId } from '../../core/ids.ts';

/** One subtask's part of a checkpoint, as its acknowledgement reached the coordinator. */
export interface SubtaskCheckpointTrace {
  readonly vertex: number;
  readonly subtask: number;
  /** Wall-clock ms the acknowledgement arrived at the job master. */
  readonly ackAtMs: number;
  readonly metrics: SubtaskCheckpointMetrics;
}

/** The recorded course of one checkpoint or savepoint. */
export interface CheckpointTrace {
  readonly checkpointId: CheckpointId;
  /** The attempt that triggered it. */
  readonly attempt: number;
  readonly options: CheckpointOptions;
  /** Wall-clock ms of the trigger, with sub-millisecond steps (within 1 ms of the barrier's timestamp). */
  readonly triggeredAtMs: number;
  /** In order of arrival. */
  readonly subtasks: SubtaskCheckpointTrace[];
  /** Wall-clock ms the completion notifications were sent; null when none were (failed, or a savepoint that commits nothing). */
  notifiedAtMs: number | null;
  /** Wall-clock ms the job master learned it failed; null otherwise. */
  failedAtMs: number | null;
}

/**
 * Finished checkpoints whose traces are kept besides the retained and pending ones: the newest
 * failed ones, and the newest completed ones when fewer are retained (a job retaining one would
 * otherwise drop a trace each interval, while someone is about to replay it).
 */
const FAILED_KEPT = 5;
const COMPLETED_KEPT = 5;

export class CheckpointTraces {
  private readonly traces = new Map<number, CheckpointTrace>();

  /** `nowMs`: the trigger in wall-clock ms with sub-millisecond steps (the barrier's timestamp is whole ms). */
  triggered(barrier: CheckpointBarrier, attempt: number, nowMs: number): void {
    this.traces.set(barrier.checkpointId, {
      checkpointId: barrier.checkpointId,
      attempt,
      options: barrier.options,
      triggeredAtMs: nowMs,
      subtasks: [],
      notifiedAtMs: null,
      failedAtMs: null,
    });
  }

  acknowledged(ack: CheckpointAck, nowMs: number): void {
    const trace = this.traces.get(ack.checkpointId);
    if (trace === undefined) return;
    if (trace.subtasks.some((s) => s.vertex === ack.task.vertex && s.subtask === ack.task.subtask)) return;
    trace.subtasks.push({ vertex: ack.task.vertex, subtask: ack.task.subtask, ackAtMs: nowMs, metrics: ack.metrics });
  }

  notified(checkpointId: CheckpointId, nowMs: number): void {
    const trace = this.traces.get(checkpointId);
    if (trace !== undefined && trace.notifiedAtMs === null) trace.notifiedAtMs = nowMs;
  }

  failed(checkpointId: CheckpointId, nowMs: number): void {
    const trace = this.traces.get(checkpointId);
    if (trace !== undefined && trace.failedAtMs === null) trace.failedAtMs = nowMs;
  }

  /** Keeps the traces of `keep` (retained and pending checkpoints) and of the newest failed and completed ones. */
  prune(keep: ReadonlySet<number>, isFailed: (id: number) => boolean): void {
    const others = [...this.traces.keys()].filter((id) => !keep.has(id)).sort((a, b) => b - a);
    const kept = new Set([...others.filter(isFailed).slice(0, FAILED_KEPT), ...others.filter((id) => !isFailed(id)).slice(0, COMPLETED_KEPT)]);
    for (const id of others) if (!kept.has(id)) this.traces.delete(id);
  }

  get(checkpointId: number): CheckpointTrace | null {
    return this.traces.get(checkpointId) ?? null;
  }

  /** Oldest first. */
  all(): CheckpointTrace[] {
    return [...this.traces.values()].sort((a, b) => a.checkpointId - b.checkpointId);
  }
}
