/**
 * What the job master knows of its task managers (JobMaster.taskManagers()), with in-memory task
 * managers: where each runs, that it answers, its clock offset, the bytes its data links carried
 * and the subtasks placed on it; and checkpoint traces of a task manager whose clock is skewed,
 * read on the job master's clock once the offset is known.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { CheckpointTrace } from '../../src/cluster/job-master/checkpoint-traces.ts';
import type { InMemoryPoolFaults } from '../../src/cluster/launchers/in-memory-task-managers.ts';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import { whenRunning } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob, until } from '../support/jobs.ts';

/** A keyed count (a keyBy shuffle) at parallelism 2 on two in-memory task managers, held by `gate`. */
async function startOnTwo(gate: SourceGate, o: { heartbeatMs: number; skewMs?: readonly number[] }) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    heartbeat: { intervalMs: o.heartbeatMs, timeoutMs: Math.max(10_000, o.heartbeatMs * 2) },
    checkpointing: { retained: 3 },
  });
  buildKeyedCountJob(env, new CollectSink<string>(), { count: 1_000_000, keys: 20, gate });
  let master: JobMaster | null = null;
  const skew = o.skewMs;
  const client = await env.executeAsync('tm-status', {
    inMemoryTaskManagers: 2,
    onJobMaster: (m) => (master = m),
    ...(skew ? { taskManagerClockSkewMs: (index: number) => skew[index] ?? 0 } : {}),
  });
  await whenRunning(client);
  return { client, master: master! };
}

describe('task managers as the job master sees them', () => {
  it('in memory: described, answering, on the job master clock, with the bytes of a keyBy shuffle and their subtasks', async () => {
    const gate = new SourceGate(0);
    const { client, master } = await startOnTwo(gate, { heartbeatMs: 20 });
    try {
      gate.allowUpTo(2_000);
      await gate.reached(2);
      await until('both task managers reported data traffic and a round trip', () =>
        master.taskManagers().every((t) => t.data.bytesSent > 0 && t.data.bytesReceived > 0 && t.clockOffset !== null),
      );
      const tms = master.taskManagers();
      expect(tms.map((t) => t.index)).toEqual([0, 1]);
      for (const t of tms) {
        expect(t.description).toEqual({ host: hostname(), pid: null, slots: null, transport: 'in-memory', dataAddress: null });
        expect(t.state).toBe('running');
        expect(t.lastHeartbeatAgeMs).not.toBeNull();
        expect(t.lastHeartbeatAgeMs!).toBeGreaterThanOrEqual(0);
        expect(t.roundTripMs).not.toBeNull();
        // One clock: the offset is within its uncertainty, so nothing of this task manager is corrected.
        expect(Math.abs(t.clockOffset!.offsetMs)).toBeLessThanOrEqual(t.clockOffset!.uncertaintyMs);
        // Frames of the shuffle go both ways (half of each source's keys belong to the other task manager); credits come back.
        expect(t.data.messagesSent).toBeGreaterThan(0);
        expect(t.data.messagesReceived).toBeGreaterThan(0);
        // Slot sharing: subtask i of every vertex on task manager i.
        expect(t.subtasks.map((s) => s.subtask)).toEqual([t.index, t.index]);
        expect(t.subtasks.map((s) => s.vertex).sort()).toEqual([0, 1]);
        expect(t.slotsUsed).toBe(1);
      }
      // What one sent, the other received (in flight aside: the totals only grow).
      const before = master.taskManagers();
      gate.allowUpTo(4_000);
      await gate.reached(2);
      await until('more bytes reported', () => master.taskManagers().every((t, i) => t.data.bytesSent > before[i]!.data.bytesSent));
    } finally {
      gate.open();
      await client.cancel();
    }
    // After the job: the pool was shut down; the figures of its life stay.
    const after = master.taskManagers();
    expect(after.map((t) => t.state)).toEqual(['stopped', 'stopped']);
    expect(after.every((t) => t.data.bytesSent > 0)).toBe(true);
  });

  it('bytes count over a task manager process life: a restart on the same, warm task managers does not reset them', async () => {
    const gate = new SourceGate(0);
    const { client, master } = await startOnTwo(gate, { heartbeatMs: 20 });
    try {
      gate.allowUpTo(1_000);
      await gate.reached(2);
      await client.triggerCheckpoint();
      await until('bytes reported', () => master.taskManagers().every((t) => t.data.bytesSent > 0));
      const before = master.taskManagers().map((t) => t.data.bytesSent);
      // Every figure read from here on, through the restart: a total reset per attempt would go down.
      const seen: number[][] = [];
      const read = () => seen.push(master.taskManagers().map((t) => t.data.bytesSent));
      master.failGlobal(new Error('restart on warm task managers'));
      await until('the second attempt runs', () => {
        read();
        return master.metrics().attempt === 1 && master.metrics().status === 'RUNNING';
      });
      gate.allowUpTo(2_000);
      await gate.reached(2);
      await until('more bytes reported in attempt 1', () => {
        read();
        return master.taskManagers().every((t, i) => t.data.bytesSent > before[i]! * 1.5);
      });
      for (let i = 1; i < seen.length; i++) for (const tm of [0, 1]) expect(seen[i]![tm]!).toBeGreaterThanOrEqual(seen[i - 1]![tm]!);
      expect(master.taskManagers().map((t) => t.state)).toEqual(['running', 'running']);
    } finally {
      gate.open();
      await client.cancel();
    }
  });

  it('one that dies alone is listed dead until the next attempt runs on new task managers, whose totals start from 0', async () => {
    const gate = new SourceGate(0);
    const env = StreamEnvironment.create({
      parallelism: 2,
      heartbeat: { intervalMs: 20, timeoutMs: 200 },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 1_000 },
    });
    buildKeyedCountJob(env, new CollectSink<string>(), { count: 1_000_000, keys: 20, gate });
    const pools: InMemoryPoolFaults[] = [];
    let master: JobMaster | null = null;
    const client = await env.executeAsync('tm-death', {
      inMemoryTaskManagers: 2,
      taskManagerFaults: { launched: (pool) => pools.push(pool) },
      onJobMaster: (m) => (master = m),
    });
    try {
      await whenRunning(client);
      gate.allowUpTo(1_000);
      await gate.reached(2);
      // Restored from here, with the gate where it is, the next attempt's sources emit nothing more.
      await client.triggerCheckpoint();
      await until('bytes reported', () => master!.taskManagers().every((t) => t.data.bytesSent > 0));
      const before = master!.taskManagers().map((t) => t.data.bytesSent);
      expect(pools[0]!.kill(1)).toBe(true);
      // Found by missed heartbeats; the restart waits a second, meanwhile the list shows it.
      await until('task manager 1 listed dead', () => master!.taskManagers()[1]?.state === 'dead');
      // The other one stops its subtasks; its pool is then shut down with the failed attempt.
      await until('task manager 0 stopped', () => master!.taskManagers()[0]?.state === 'stopped');
      expect(master!.taskManagers()[1]!.state).toBe('dead');
      await until('the next attempt runs on a new pool', () => pools.length === 2 && master!.metrics().attempt === 1 && master!.metrics().status === 'RUNNING');
      const fresh = master!.taskManagers();
      expect(fresh.map((t) => t.state)).toEqual(['running', 'running']);
      expect(fresh.every((t, i) => t.data.bytesSent < before[i]!)).toBe(true);
    } finally {
      gate.open();
      await client.cancel();
    }
  });

  it('a job in this thread has no task managers', async () => {
    const gate = new SourceGate(0);
    const env = StreamEnvironment.create({ parallelism: 2 });
    buildKeyedCountJob(env, new CollectSink<string>(), { count: 100, keys: 5, gate });
    let master: JobMaster | null = null;
    const client = await env.executeAsync('in-thread', { onJobMaster: (m) => (master = m) });
    await whenRunning(client);
    expect(master!.taskManagers()).toEqual([]);
    gate.open();
    await client.result;
    expect(master!.taskManagers()).toEqual([]);
  });
});

/** Every barrier arrival of the checkpoint against its trigger..notification window on the job master's clock. */
function arrivals(trace: CheckpointTrace, placedOn: (subtask: number) => number): Array<{ tm: number; at: number }> {
  return trace.subtasks.flatMap((s) => s.metrics.barrierArrivalsMs.filter((at) => at >= 0).map((at) => ({ tm: placedOn(s.subtask), at })));
}

describe('checkpoint traces of task managers with skewed clocks', () => {
  const SKEW = [-3_000, 5_000];

  it('with heartbeat round trips: barrier arrivals fall within trigger..completion on the job master clock', async () => {
    const gate = new SourceGate(0);
    const { client, master } = await startOnTwo(gate, { heartbeatMs: 20, skewMs: SKEW });
    try {
      await until('both offsets estimated', () => master.taskManagers().every((t) => t.clockOffset !== null));
      for (const t of master.taskManagers()) {
        // Each clock's sub-millisecond wall time is anchored on Date.now() once (whole ms): the skewed
        // clocks differ from the job master's by their skew within 1 ms, on top of the round trip's uncertainty.
        expect(Math.abs(t.clockOffset!.offsetMs - SKEW[t.index]!)).toBeLessThanOrEqual(t.clockOffset!.uncertaintyMs + 1);
      }
      gate.allowUpTo(500);
      await gate.reached(2);
      const { checkpointId } = await client.triggerCheckpoint();
      const trace = master.traces.get(checkpointId)!;
      // The estimate's uncertainty, and 1 ms for the clocks' anchoring on whole milliseconds (above).
      const slack = Math.max(...master.taskManagers().map((t) => t.clockOffset!.uncertaintyMs)) + 1;
      const seen = arrivals(trace, (subtask) => subtask % 2);
      expect(new Set(seen.map((a) => a.tm))).toEqual(new Set([0, 1]));
      for (const { at } of seen) {
        expect(at).toBeGreaterThanOrEqual(trace.triggeredAtMs - slack);
        expect(at).toBeLessThanOrEqual(trace.notifiedAtMs! + slack);
      }
      for (const s of trace.subtasks) {
        expect(s.metrics.syncStartMs).toBeGreaterThanOrEqual(trace.triggeredAtMs - slack);
        expect(s.metrics.syncStartMs).toBeLessThanOrEqual(s.ackAtMs + slack);
      }
    } finally {
      gate.open();
      await client.cancel();
    }
  });

  it('without round trips (no heartbeat yet): the same stamps are the task managers own, outside that window', async () => {
    const gate = new SourceGate(0);
    // The first heartbeat would go out after 10 minutes: no offset is known during the test.
    const { client, master } = await startOnTwo(gate, { heartbeatMs: 600_000, skewMs: SKEW });
    try {
      expect(master.taskManagers().every((t) => t.clockOffset === null)).toBe(true);
      gate.allowUpTo(500);
      await gate.reached(2);
      const { checkpointId } = await client.triggerCheckpoint();
      const trace = master.traces.get(checkpointId)!;
      const seen = arrivals(trace, (subtask) => subtask % 2);
      expect(seen.length).toBeGreaterThan(0);
      for (const { tm, at } of seen) {
        if (tm === 1) expect(at).toBeGreaterThan(trace.notifiedAtMs! + 4_000);
        else expect(at).toBeLessThan(trace.triggeredAtMs - 2_000);
      }
    } finally {
      gate.open();
      await client.cancel();
    }
  });
});
