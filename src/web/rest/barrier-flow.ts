/**
 * `GET /jobs/:id/checkpoints/details/:cid/flow` (Weir's own route): the course of one checkpoint
 * as a time-ordered list of events for the dashboard's barrier-flow view — trigger, barriers
 * injected at the sources and travelling each channel, channels held back while a subtask aligns,
 * barriers overtaking buffers (unaligned), the sync and async phases, the acks, completion and
 * notifications. A pure function of the job graph, the checkpoint's stats and its trace; times are
 * milliseconds since the trigger (to 0.1 ms), the trigger's timestamp whole wall-clock milliseconds.
 */
import type { CheckpointStats } from '../../checkpoint/coordinator/checkpoint-stats.ts';
import type { CheckpointTrace } from '../../cluster/job-master/checkpoint-traces.ts';
import { buildExecutionPlan } from '../../graph/execution-plan.ts';
import type { JobGraph } from '../../graph/job-graph.ts';
import { vertexId } from '../web-job.ts';
import type { Flow, FlowEvent, FlowEventType, SubtaskRef } from './responses.ts';

const ms = (x: number): number => Math.round(x * 10) / 10;
const sub = (vertex: number, subtask: number): SubtaskRef => ({ vertex: vertexId(vertex), subtask });

export function barrierFlow(graph: JobGraph, stats: CheckpointStats, trace: CheckpointTrace | null, discarded = false): Flow {
  const plan = buildExecutionPlan(graph);
  const t0 = trace?.triggeredAtMs ?? stats.triggeredAtMs;
  const events: FlowEvent[] = [{ t: 0, type: 'trigger' }];
  const acked = new Map((trace?.subtasks ?? []).map((s) => [`${s.vertex}/${s.subtask}`, s]));
  const syncStartOf = (vertex: number, subtask: number): number | null => {
    const s = acked.get(`${vertex}/${subtask}`);
    return s === undefined ? null : s.metrics.syncStartMs - t0;
  };
  const alignment = trace?.options.alignment ?? 'aligned';
  for (const s of trace?.subtasks ?? []) {
    const m = s.metrics;
    const at = sub(s.vertex, s.subtask);
    const syncT = m.syncStartMs - t0;
    const isSource = graph.vertices[s.vertex]!.isSource;
    if (isSource) events.push({ t: ms(syncT), type: 'inject', ...at });
    const inputs = plan.subtasks.find((p) => p.vertex === s.vertex && p.subtask === s.subtask)?.inputs ?? [];
    const arrivals = m.barrierArrivalsMs.filter((x) => x >= 0).map((x) => x - t0);
    m.barrierArrivalsMs.forEach((arrivedMs, channel) => {
      if (arrivedMs < 0) return;
      const c = plan.channels.find((x) => x.id === inputs[channel]?.channel);
      if (c === undefined) return;
      const arrivedT = arrivedMs - t0;
      const sentT = syncStartOf(c.producer.vertex, c.producer.subtask) ?? 0;
      const overtook = m.unaligned;
      events.push({
        t: ms(arrivedT),
        type: 'barrier',
        channel: c.id,
        sent: ms(Math.min(sentT, arrivedT)),
        from: sub(c.producer.vertex, c.producer.subtask),
        to: at,
        overtook,
        ahead: m.buffersAhead[channel] ?? -1,
      });
      // Aligned: a channel whose barrier came in before the last one is held back until the snapshot.
      if (!m.unaligned && alignment !== 'at-least-once' && arrivals.length > 1 && arrivedT < syncT) {
        events.push({ t: ms(arrivedT), type: 'blocked', channel: c.id, until: ms(syncT), ...at });
      }
    });
    if (arrivals.length > 1) {
      const first = Math.min(...arrivals);
      events.push({ t: ms(first), type: 'alignment', duration: ms(m.alignmentMs), records: m.alignmentRecords, unaligned: m.unaligned, ...at });
    }
    if (m.unaligned && alignment === 'aligned') events.push({ t: ms(syncT), type: 'switch-to-unaligned', ...at });
    events.push({ t: ms(syncT), type: 'sync', duration: ms(m.syncMs), ...at });
    events.push({
      t: ms(syncT + m.syncMs),
      type: 'async',
      duration: ms(m.asyncMs),
      bytes: m.persistedBytes,
      inflight_bytes: m.channelStateBytes,
      ...at,
    });
    events.push({ t: ms(s.ackAtMs - t0), type: 'ack', ...at });
  }
  if (stats.status === 'COMPLETED') events.push({ t: ms(stats.durationMs), type: 'complete', location: discarded ? null : stats.location, discarded });
  if (stats.status === 'FAILED')
    events.push({
      t: ms(trace?.failedAtMs == null ? stats.durationMs : trace.failedAtMs - t0),
      type: 'failed',
      reason: stats.failureReason,
      message: stats.failureMessage,
    });
  if (trace?.notifiedAtMs != null) events.push({ t: ms(trace.notifiedAtMs - t0), type: 'notify' });
  events.sort((a, b) => a.t - b.t || ORDER.indexOf(a.type) - ORDER.indexOf(b.type));
  return {
    checkpoint_id: stats.checkpointId,
    status: stats.status,
    kind: stats.kind,
    is_final: stats.isFinal,
    alignment,
    aligned_timeout: trace?.options.alignedTimeoutMs ?? null,
    trigger_timestamp: Math.round(t0),
    traced: trace !== null,
    vertices: graph.vertices.map((v) => ({
      id: vertexId(v.index),
      name: v.name,
      parallelism: v.parallelism,
      is_source: v.isSource,
      inputs: v.inputs.map((e) => vertexId(e.source)),
    })),
    channels: plan.channels.map((c) => ({ id: c.id, from: sub(c.producer.vertex, c.producer.subtask), to: sub(c.consumer.vertex, c.consumer.subtask) })),
    events,
  };
}

/** Same-time events in causal order. */
const ORDER: readonly FlowEventType[] = [
  'trigger',
  'inject',
  'barrier',
  'blocked',
  'alignment',
  'switch-to-unaligned',
  'sync',
  'async',
  'ack',
  'complete',
  'failed',
  'notify',
];
