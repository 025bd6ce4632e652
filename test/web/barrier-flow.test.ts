import { describe, expect, it } from 'vitest';
import type { SubtaskCheckpointMetrics } from '../../src/checkpoint/ack.ts';
import type { CheckpointStats } from '../../src/checkpoint/coordinator/checkpoint-stats.ts';
import type { CheckpointTrace } from '../../src/cluster/job-master/checkpoint-traces.ts';
import { checkpointId, type TaskId } from '../../src/core/ids.ts';
import type { JobGraph, JobVertex } from '../../src/graph/job-graph.ts';
import { barrierFlow } from '../../src/web/rest/barrier-flow.ts';

/** Two one-subtask sources feeding a two-input vertex: 0 -> 2 <- 1. */
function graph(): JobGraph {
  const edge = (source: number, input: number) => ({ source, target: 2, partitioner: { type: 'forward' as const }, input, sideOutput: null, from: 0 });
  const v = (index: number, name: string, isSource: boolean, inputs: JobVertex['inputs'], outputs: JobVertex['outputs']): JobVertex => ({
    index,
    name,
    parallelism: 1,
    maxParallelism: 128,
    chain: [],
    chainParents: [],
    inputs,
    outputs,
    isSource,
  });
  const e0 = edge(0, 0);
  const e1 = edge(1, 1);
  return { vertices: [v(0, 'a', true, [], [e0]), v(1, 'b', true, [], [e1]), v(2, 'join', false, [e0, e1], [])] };
}

const T0 = 1_000_000;
const metrics = (o: Partial<SubtaskCheckpointMetrics>): SubtaskCheckpointMetrics => ({
  syncMs: 1,
  asyncMs: 2,
  alignmentMs: 0,
  alignmentRecords: 0,
  persistedBytes: 10,
  stateBytes: 10,
  channelStateBytes: 0,
  unaligned: false,
  barrierArrivalsMs: [],
  buffersAhead: [],
  syncStartMs: T0,
  ...o,
});

function run(alignment: 'aligned' | 'unaligned', join: Partial<SubtaskCheckpointMetrics>, alignedTimeoutMs: number | null = null) {
  const id = checkpointId(7);
  const stats: CheckpointStats = {
    checkpointId: id,
    kind: 'checkpoint',
    isFinal: false,
    status: 'COMPLETED',
    triggeredAtMs: T0,
    durationMs: 30,
    failureReason: null,
    failureMessage: null,
    subtasks: [] as Array<{ task: TaskId; metrics: SubtaskCheckpointMetrics }>,
    persistedBytes: 30,
    location: '/x/chk-7',
  };
  const trace: CheckpointTrace = {
    checkpointId: id,
    attempt: 0,
    options: { kind: 'checkpoint', alignment, alignedTimeoutMs, isFinal: false },
    triggeredAtMs: T0,
    subtasks: [
      { vertex: 0, subtask: 0, ackAtMs: T0 + 5, metrics: metrics({ syncStartMs: T0 + 1 }) },
      { vertex: 1, subtask: 0, ackAtMs: T0 + 6, metrics: metrics({ syncStartMs: T0 + 2 }) },
      { vertex: 2, subtask: 0, ackAtMs: T0 + 25, metrics: metrics(join) },
    ],
    notifiedAtMs: T0 + 31,
    failedAtMs: null,
  };
  return barrierFlow(graph(), stats, trace);
}

describe('barrier flow (pure)', () => {
  it('aligned: the early channel is held back from its barrier to the snapshot; barriers travel from the producer sync', () => {
    const { events } = run('aligned', { barrierArrivalsMs: [T0 + 3, T0 + 10], syncStartMs: T0 + 10, alignmentMs: 7, alignmentRecords: 40 });
    expect(events.map((e) => e.type)).toEqual([
      'trigger',
      'inject',
      'sync',
      'inject', // b at 2, a's async also at 2: causal order puts injections first
      'sync',
      'async',
      'barrier',
      'blocked',
      'alignment',
      'async',
      'ack',
      'ack',
      'barrier',
      'sync',
      'async',
      'ack',
      'complete',
      'notify',
    ]);
    const barriers = events.filter((e) => e.type === 'barrier');
    expect(barriers.map((b) => [b.sent, b.t, b.overtook])).toEqual([
      [1, 3, false],
      [2, 10, false],
    ]);
    expect(events.find((e) => e.type === 'blocked')).toMatchObject({ t: 3, until: 10, channel: '0.0->2.0#0', vertex: '2', subtask: 0 });
    expect(events.find((e) => e.type === 'alignment')).toMatchObject({ t: 3, duration: 7, records: 40 });
  });

  it('a timeout switch: an aligned checkpoint whose subtask went unaligned is marked, nothing is held, barriers overtake', () => {
    const { events } = run('aligned', { barrierArrivalsMs: [T0 + 3, T0 + 12], syncStartMs: T0 + 8, unaligned: true, channelStateBytes: 500 }, 5);
    expect(events.filter((e) => e.type === 'switch-to-unaligned')).toEqual([{ t: 8, type: 'switch-to-unaligned', vertex: '2', subtask: 0 }]);
    expect(events.filter((e) => e.type === 'blocked')).toEqual([]);
    expect(events.filter((e) => e.type === 'barrier').every((b) => b.overtook === true)).toBe(true);
    expect(events.find((e) => e.type === 'async' && e.vertex === '2')).toMatchObject({ inflight_bytes: 500 });
  });

  it('unaligned from the start: no switch marker', () => {
    const { events } = run('unaligned', { barrierArrivalsMs: [T0 + 3, T0 + 12], syncStartMs: T0 + 3, unaligned: true });
    expect(events.some((e) => e.type === 'switch-to-unaligned')).toBe(false);
  });
});
