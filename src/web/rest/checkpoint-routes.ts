/**
 * The checkpoint routes in Flink's shapes: `/jobs/:id/checkpoints` (counts, summary, latest,
 * history), `/details/:cid` (per vertex), `/details/:cid/subtasks/:vid` (per subtask) and
 * `/checkpoints/config`. Figures come from the coordinator's history (the newest 100) and, for
 * ack times and barrier arrivals, from the job master's traces (retained, pending, newest failed).
 * Timestamps are whole wall-clock milliseconds (the traces measure finer; the flow route keeps that
 * precision in its times relative to the trigger).
 */
import type { SubtaskCheckpointMetrics } from '../../checkpoint/ack.ts';
import type { CheckpointStats } from '../../checkpoint/coordinator/checkpoint-stats.ts';
import type { CheckpointTrace } from '../../cluster/job-master/checkpoint-traces.ts';
import { buildExecutionPlan } from '../../graph/execution-plan.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import { NotFound } from './errors.ts';
import type {
  CheckpointConfig,
  CheckpointDetails,
  CheckpointEntry,
  CheckpointsOverview,
  Stat,
  SubtaskCheckpoint,
  SubtaskCheckpointDetails,
  VertexCheckpoint,
} from './responses.ts';

/** min, max, avg and percentiles of a list of figures (all 0 for none). */
export function summaryOf(values: readonly number[]): Stat {
  if (values.length === 0) return { min: 0, max: 0, avg: 0, p50: 0, p90: 0, p99: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  const sum = sorted.reduce((a, b) => a + b, 0);
  return { min: sorted[0]!, max: sorted.at(-1)!, avg: Math.round(sum / sorted.length), p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

function checkpointType(s: CheckpointStats, trace: CheckpointTrace | null): CheckpointEntry['checkpoint_type'] {
  if (s.kind === 'savepoint') return 'SAVEPOINT';
  const unaligned = s.subtasks.some((t) => t.metrics.unaligned) || trace?.options.alignment === 'unaligned';
  return unaligned ? 'UNALIGNED_CHECKPOINT' : 'CHECKPOINT';
}

const sumOf = (s: CheckpointStats, f: (m: SubtaskCheckpointMetrics) => number): number => s.subtasks.reduce((a, t) => a + f(t.metrics), 0);

/** A timestamp or duration in whole milliseconds, as Flink's REST API gives them. */
const wholeMs = (x: number): number => Math.round(x);

function latestAck(trace: CheckpointTrace | null, vertex?: number): number | null {
  const acks = (trace?.subtasks ?? []).filter((t) => vertex === undefined || t.vertex === vertex).map((t) => t.ackAtMs);
  return acks.length === 0 ? null : wholeMs(Math.max(...acks));
}

/**
 * A completed checkpoint that retention (or the job's end) removed from storage: its path no longer
 * exists. Savepoints belong to the user and are never discarded by Weir.
 */
export function isDiscarded(job: WebJob, s: CheckpointStats): boolean {
  if (s.status !== 'COMPLETED' || s.kind === 'savepoint') return false;
  return !job.master.checkpointCoordinator.store.all().some((c) => c.checkpointId === s.checkpointId);
}

function numSubtasks(job: WebJob, vertex?: number): number {
  return job.master.config.graph.vertices.filter((v) => vertex === undefined || v.index === vertex).reduce((a, v) => a + v.parallelism, 0);
}

/** The trigger time: the trace's (sub-millisecond, the same clock as its acks and arrivals) when there is one. */
export function triggerOf(s: CheckpointStats, trace: CheckpointTrace | null): number {
  return trace?.triggeredAtMs ?? s.triggeredAtMs;
}

/** `at - trigger` in whole ms: the difference of the two whole-ms timestamps the routes give. */
const sinceTrigger = (at: number, s: CheckpointStats, trace: CheckpointTrace | null): number => wholeMs(at) - wholeMs(triggerOf(s, trace));

function historyEntry(job: WebJob, s: CheckpointStats): CheckpointEntry {
  const trace = job.master.traces.get(s.checkpointId);
  const t0 = triggerOf(s, trace);
  const discarded = isDiscarded(job, s);
  return {
    className: s.kind === 'savepoint' ? 'savepoint' : 'checkpoint',
    id: s.checkpointId,
    status: s.status,
    is_savepoint: s.kind === 'savepoint',
    is_final: s.isFinal,
    checkpoint_type: checkpointType(s, trace),
    trigger_timestamp: wholeMs(t0),
    latest_ack_timestamp: latestAck(trace),
    state_size: sumOf(s, (m) => m.stateBytes),
    checkpointed_size: s.persistedBytes,
    end_to_end_duration: wholeMs(s.status === 'IN_PROGRESS' ? job.now() - t0 : s.durationMs),
    processed_data: sumOf(s, (m) => m.alignmentRecords),
    persisted_data: sumOf(s, (m) => m.channelStateBytes),
    num_subtasks: numSubtasks(job),
    num_acknowledged_subtasks: s.subtasks.length,
    // Flink's field: true once the checkpoint's files were deleted (its path is then withheld).
    discarded,
    external_path: discarded ? null : s.location,
    failure_message: s.failureMessage,
    failure_reason: s.failureReason,
    traced: trace !== null,
  };
}

export function checkpointsOverview(job: WebJob): CheckpointsOverview {
  const history = job.master.checkpointCoordinator.history;
  const completed = history.filter((s) => s.status === 'COMPLETED');
  const latestOf = (pred: (s: CheckpointStats) => boolean) => {
    const s = [...history].reverse().find(pred);
    return s === undefined ? null : historyEntry(job, s);
  };
  const restore = job.master.latestRestore;
  return {
    counts: {
      restored: restore?.count ?? 0,
      total: history.length,
      in_progress: history.filter((s) => s.status === 'IN_PROGRESS').length,
      completed: completed.length,
      failed: history.filter((s) => s.status === 'FAILED').length,
    },
    summary: {
      end_to_end_duration: summaryOf(completed.map((s) => Math.round(s.durationMs))),
      checkpointed_size: summaryOf(completed.map((s) => s.persistedBytes)),
      state_size: summaryOf(completed.map((s) => sumOf(s, (m) => m.stateBytes))),
      persisted_data: summaryOf(completed.map((s) => sumOf(s, (m) => m.channelStateBytes))),
      processed_data: summaryOf(completed.map((s) => sumOf(s, (m) => m.alignmentRecords))),
      alignment_duration: summaryOf(completed.flatMap((s) => s.subtasks.map((t) => Math.round(t.metrics.alignmentMs)))),
    },
    latest: {
      completed: latestOf((s) => s.status === 'COMPLETED' && s.kind === 'checkpoint'),
      savepoint: latestOf((s) => s.status === 'COMPLETED' && s.kind === 'savepoint'),
      failed: latestOf((s) => s.status === 'FAILED'),
      restored: restore === null ? null : { id: restore.checkpointId, restore_timestamp: restore.atMs, restore_duration: Math.round(restore.durationMs) },
    },
    history: [...history].reverse().map((s) => historyEntry(job, s)),
  };
}

/** The stats of checkpoint `cid` (a route parameter), or a 404 naming it. */
export function statsOf(job: WebJob, cid: string): CheckpointStats {
  const id = Number(cid);
  const s = /^\d+$/.test(cid) ? job.master.checkpointCoordinator.history.find((h) => h.checkpointId === id) : undefined;
  if (s === undefined) throw new NotFound(`no checkpoint '${cid}' in this job's history (the newest 100 are kept)`);
  return s;
}

/** The vertex `vid` (a route parameter), or a 404 naming it. */
export function vertexOf(job: WebJob, vid: string): number {
  const v = job.master.config.graph.vertices.find((x) => vertexId(x.index) === vid);
  if (v === undefined) throw new NotFound(`no vertex '${vid}'; vertices: ${job.master.config.graph.vertices.map((x) => vertexId(x.index)).join(', ')}`);
  return v.index;
}

function vertexSummary(job: WebJob, s: CheckpointStats, vertex: number): VertexCheckpoint {
  const mine = s.subtasks.filter((t) => t.task.vertex === vertex);
  const trace = job.master.traces.get(s.checkpointId);
  const all = numSubtasks(job, vertex);
  const acks = (trace?.subtasks ?? []).filter((t) => t.vertex === vertex).map((t) => t.ackAtMs);
  const ack = acks.length === 0 ? null : Math.max(...acks);
  return {
    id: vertexId(vertex),
    name: job.master.config.graph.vertices[vertex]!.name,
    status: mine.length === all ? 'COMPLETED' : s.status === 'FAILED' ? 'FAILED' : 'IN_PROGRESS',
    latest_ack_timestamp: ack === null ? null : wholeMs(ack),
    end_to_end_duration: ack === null ? null : sinceTrigger(ack, s, trace),
    state_size: mine.reduce((a, t) => a + t.metrics.stateBytes, 0),
    checkpointed_size: mine.reduce((a, t) => a + t.metrics.persistedBytes, 0),
    processed_data: mine.reduce((a, t) => a + t.metrics.alignmentRecords, 0),
    persisted_data: mine.reduce((a, t) => a + t.metrics.channelStateBytes, 0),
    num_subtasks: all,
    num_acknowledged_subtasks: mine.length,
  };
}

export function checkpointDetails(job: WebJob, cid: string): CheckpointDetails {
  const s = statsOf(job, cid);
  const tasks: Record<string, VertexCheckpoint> = {};
  for (const v of job.master.config.graph.vertices) tasks[vertexId(v.index)] = vertexSummary(job, s, v.index);
  return { ...historyEntry(job, s), tasks };
}

export function subtaskDetails(job: WebJob, cid: string, vid: string): SubtaskCheckpointDetails {
  const s = statsOf(job, cid);
  const vertex = vertexOf(job, vid);
  const trace = job.master.traces.get(s.checkpointId);
  const t0 = triggerOf(s, trace);
  const v = job.master.config.graph.vertices[vertex]!;
  const plan = buildExecutionPlan(job.master.config.graph);
  const subtasks: SubtaskCheckpoint[] = [];
  for (let i = 0; i < v.parallelism; i++) {
    const acked = s.subtasks.find((t) => t.task.vertex === vertex && t.task.subtask === i);
    const traced = trace?.subtasks.find((t) => t.vertex === vertex && t.subtask === i) ?? null;
    if (acked === undefined) {
      subtasks.push({ index: i, status: 'pending_or_failed' });
      continue;
    }
    // Barrier arrivals and queued counts are kept in the trace only (see JobMaster's ack path).
    const m = traced?.metrics ?? acked.metrics;
    const inputs = plan.subtasks.find((p) => p.vertex === vertex && p.subtask === i)?.inputs ?? [];
    const arrivals = m.barrierArrivalsMs.filter((t) => t >= 0);
    subtasks.push({
      index: i,
      status: 'completed',
      ack_timestamp: traced === null ? null : wholeMs(traced.ackAtMs),
      end_to_end_duration: traced === null ? null : sinceTrigger(traced.ackAtMs, s, trace),
      state_size: m.stateBytes,
      checkpointed_size: m.persistedBytes,
      checkpoint: { sync: round1(m.syncMs), async: round1(m.asyncMs) },
      alignment: { processed: m.alignmentRecords, persisted: m.channelStateBytes, duration: round1(m.alignmentMs) },
      start_delay: round1((arrivals.length > 0 ? Math.min(...arrivals) : m.syncStartMs) - t0),
      unaligned_checkpoint: m.unaligned,
      sync_start_timestamp: wholeMs(m.syncStartMs),
      barrier_arrivals: m.barrierArrivalsMs.map((at, channel) => {
        const c = plan.channels.find((x) => x.id === inputs[channel]?.channel);
        const ahead = m.buffersAhead[channel] ?? -1;
        return {
          channel,
          from: c ? { vertex: vertexId(c.producer.vertex), subtask: c.producer.subtask } : null,
          timestamp: at < 0 ? null : wholeMs(at),
          queued_ahead: ahead < 0 ? null : ahead,
        };
      }),
    });
  }
  return { ...vertexSummary(job, s, vertex), checkpoint_id: s.checkpointId, subtasks };
}

export function checkpointConfig(job: WebJob): CheckpointConfig {
  const c = job.master.config.checkpointing;
  return {
    mode: c.mode === 'exactly-once' ? 'exactly_once' : 'at_least_once',
    interval: c.intervalMs ?? -1,
    timeout: c.timeoutMs,
    min_pause: c.minPauseMs,
    max_concurrent: c.maxConcurrent,
    externalization: { enabled: c.retainOnCancel, delete_on_cancellation: !c.retainOnCancel },
    tolerable_failed_checkpoints: c.tolerableFailures,
    retained: c.retained,
    unaligned_checkpoints: c.unaligned,
    aligned_checkpoint_timeout: c.unaligned ? c.alignedCheckpointTimeoutMs : -1,
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
