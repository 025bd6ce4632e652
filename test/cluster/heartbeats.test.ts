/**
 * Heartbeats between the job master and task managers: the monitor on a virtual clock,
 * and a task manager over the in-memory transport whose answers are lost: it is declared dead,
 * the job fails over and recovers exactly-once from the latest completed checkpoint.
 */
import { describe, expect, it } from 'vitest';
import { HeartbeatMonitor, silentTargets } from '../../src/cluster/job-master/heartbeat-monitor.ts';
import { answerHeartbeatsUntilReady } from '../../src/cluster/task-manager/startup-control.ts';
import { epochOf } from '../../src/cluster/transport/epoch.ts';
import { inMemoryLinkPair } from '../../src/runtime/network/link.ts';
import type { ToJobMaster, ToTaskManager } from '../../src/cluster/transport/protocol.ts';
import type { JobMaster } from '../../src/internal.ts';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import { CollectSink, ConfigError, StreamEnvironment, type JobEvent } from '../../src/index.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { checkpointInSteps } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob, expectedRunningCounts, sortedCopy, until } from '../support/jobs.ts';
import { ManualEnvironment } from '../support/manual-env.ts';

describe('HeartbeatMonitor', () => {
  it('silentTargets names the targets not heard from for longer than the timeout; one never heard from, after startTimeoutMs from the start', () => {
    const t = { timeoutMs: 50, startTimeoutMs: 2_000 };
    expect(silentTargets([100, 40, 50], 100, t, 0)).toEqual([1]);
    expect(silentTargets([], 100, t, 0)).toEqual([]);
    expect(silentTargets([null, 40], 1_000, t, 0)).toEqual([1]);
    expect(silentTargets([null, 1_990], 2_000, t, 0)).toEqual([]);
    expect(silentTargets([null, 1_990], 2_001, t, 0)).toEqual([0]);
    expect(silentTargets([null, 1_990], 2_001, t, 500)).toEqual([]);
  });

  it('declares a task manager that never says hello dead once startTimeoutMs has passed, not after timeoutMs', () => {
    const m = new ManualEnvironment();
    const dead: Array<[number, number, boolean]> = [];
    const monitor: HeartbeatMonitor = new HeartbeatMonitor(
      2,
      { intervalMs: 10, timeoutMs: 50, startTimeoutMs: 300 },
      m.environment,
      (index) => {
        if (index === 0) monitor.heard(index);
      },
      (index, silentMs, everHeard) => dead.push([index, silentMs, everHeard]),
    );
    monitor.start();
    m.advanceTo(290);
    expect(dead).toEqual([]);
    m.advanceTo(320);
    expect(dead).toEqual([[1, 310, false]]);
    m.advanceTo(1_000);
    expect(dead).toHaveLength(1);
    monitor.stop();
  });

  it('declares a task manager dead once, after it stopped answering for the timeout, and stops sending it heartbeats', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const sent: Array<[number, number, number]> = [];
    const dead: Array<[number, number, number]> = [];
    const monitor: HeartbeatMonitor = new HeartbeatMonitor(
      2,
      { intervalMs: 10, timeoutMs: 50, startTimeoutMs: 1_000 },
      world.environment,
      (index, seq) => {
        sent.push([index, seq, world.now()]);
        // Task manager 0 always answers; task manager 1 stops answering after 100 ms.
        if (index === 0 || world.now() <= 100) world.execute(() => monitor.heard(index));
      },
      (index, silentMs) => dead.push([index, silentMs, world.now()]),
    );
    monitor.start();
    while (world.now() < 400 && world.step()) {
      // run the virtual world
    }
    monitor.stop();
    expect(dead).toHaveLength(1);
    const [index, silentMs, at] = dead[0]!;
    expect(index).toBe(1);
    expect(silentMs).toBeGreaterThan(50);
    expect(at).toBeGreaterThan(150);
    expect(at).toBeLessThanOrEqual(170);
    expect(sent.filter(([i, , t]) => i === 1 && t > at)).toEqual([]);
    expect(sent.filter(([i, , t]) => i === 0 && t > at).length).toBeGreaterThan(10);
  });
});

describe('HeartbeatMonitor when its own thread stands still', () => {
  it('a stall of the job master longer than the timeout declares nobody dead; silence afterwards still does', () => {
    const m = new ManualEnvironment();
    let silent1 = false;
    const dead: number[] = [];
    const monitor: HeartbeatMonitor = new HeartbeatMonitor(
      2,
      { intervalMs: 10, timeoutMs: 50, startTimeoutMs: 1_000 },
      m.environment,
      (index) => {
        if (index === 0 || !silent1) monitor.heard(index);
      },
      (index) => dead.push(index),
    );
    monitor.start();
    m.advanceTo(100);
    m.stall(500); // no tick ran, no answer could be read
    m.advanceTo(700);
    expect(dead).toEqual([]);
    silent1 = true;
    m.advanceTo(800);
    expect(dead).toEqual([1]);
    monitor.stop();
  });
});

describe('heartbeat options', () => {
  const option = (f: () => unknown): string | null => {
    try {
      f();
    } catch (err) {
      return err instanceof ConfigError ? err.option : String(err);
    }
    return null;
  };

  it('are validated naming the option, with defaults 1000 ms, 10000 ms and 30000 ms', () => {
    expect(StreamEnvironment.create().options.cluster.heartbeat).toEqual({ intervalMs: 1000, timeoutMs: 10_000, startTimeoutMs: 30_000 });
    expect(StreamEnvironment.create().options.cluster.cancellationTimeoutMs).toBe(10_000);
    expect(option(() => StreamEnvironment.create({ heartbeat: { intervalMs: 0 } }))).toBe('heartbeat.intervalMs');
    expect(option(() => StreamEnvironment.create({ heartbeat: { intervalMs: 100, timeoutMs: 100 } }))).toBe('heartbeat.timeoutMs');
    expect(option(() => StreamEnvironment.create({ heartbeat: { everyMs: 5 } as never }))).toBe('heartbeat.everyMs');
    expect(option(() => StreamEnvironment.create({ cancellationTimeoutMs: 0 }))).toBe('cancellationTimeoutMs');
    expect(StreamEnvironment.create({ heartbeat: { intervalMs: 20_000 } }).options.cluster.heartbeat).toEqual({
      intervalMs: 20_000,
      timeoutMs: 20_001,
      startTimeoutMs: 30_000,
    });
    expect(StreamEnvironment.create({ heartbeat: { timeoutMs: 45_000 } }).options.cluster.heartbeat.startTimeoutMs).toBe(45_000);
    expect(option(() => StreamEnvironment.create({ heartbeat: { startTimeoutMs: 0 } }))).toBe('heartbeat.startTimeoutMs');
  });
});

describe('lost heartbeats over the in-memory transport', () => {
  it('a task manager whose answers are lost is declared dead; the job recovers exactly-once from the latest checkpoint', async () => {
    const count = 4_000;
    const keys = 20;
    const gate = new SourceGate(0);
    const sink = new CollectSink<string>();
    const env = StreamEnvironment.create({
      parallelism: 2,
      heartbeat: { intervalMs: 20, timeoutMs: 500 },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 10 },
    });
    buildKeyedCountJob(env, sink, { count, keys, gate });
    const events: JobEvent[] = [];
    let losing = false;
    let lost = 0;
    const client = await env.executeAsync('lost-heartbeats', {
      inMemoryTaskManagers: 2,
      onEvent: (e) => events.push(e),
      loseControlMessage: (tm, m) => {
        const lose = losing && tm === 1 && m.type === 'heartbeat';
        if (lose) lost++;
        return lose;
      },
    });
    const [first] = await checkpointInSteps(client, gate, { count: 1, step: 500, subtasks: 2 });
    gate.allowUpTo(1_000);
    await gate.reached(2);
    losing = true;
    await until('the restart after lost heartbeats', () => events.some((e) => e.type === 'restarting'));
    losing = false;
    gate.open();
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    expect(lost).toBeGreaterThanOrEqual(1);
    const restarting = events.find((e) => e.type === 'restarting');
    expect(restarting?.type === 'restarting' && restarting.cause).toMatch(/task manager 1 died: no heartbeat answered for \d+ ms \(heartbeat.timeoutMs 500\)/);
    const running = events.filter((e) => e.type === 'running');
    expect(running.map((e) => e.type === 'running' && e.restoredFrom)).toEqual([null, first!.checkpointId]);
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(count, keys));
  });
});

describe('heartbeats while task managers deploy and restore (virtual clock)', () => {
  it('a starting task manager says hello, answers heartbeats while its job loads, and hands every other message over in order', () => {
    const world = new SimWorld(3, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const [master, manager] = inMemoryLinkPair<ToTaskManager, ToJobMaster>(world);
    const heard: ToJobMaster[] = [];
    master.onMessage((m) => heard.push(m));
    // The task manager's clock runs 5 s ahead of the job master's (another host): its answers say so.
    const tmClock = { now: () => world.now(), wallNow: () => world.wallNow() + 5_000 };
    const control = answerHeartbeatsUntilReady(manager, tmClock);
    const drain = () => {
      while (world.step()) {
        // deliver everything
      }
    };
    const epoch = epochOf(0, 4);
    master.send({ type: 'heartbeat', epoch, seq: 1 });
    master.send({ type: 'cancel', epoch });
    master.send({ type: 'start', epoch });
    master.send({ type: 'heartbeat', epoch, seq: 2 });
    drain();
    // The hello carries no epoch (no attempt named the task manager yet); an answer echoes its heartbeat's
    // and carries the task manager's wall clock (steps cost no virtual time here).
    const at = world.wallNow() + 5_000;
    expect(heard).toEqual([{ type: 'hello' }, { type: 'heartbeat', epoch, seq: 1, at }, { type: 'heartbeat', epoch, seq: 2, at }]);
    const taken: ToTaskManager[] = [];
    control.onMessage((m) => taken.push(m));
    master.send({ type: 'heartbeat', epoch, seq: 3 });
    drain();
    expect(taken).toEqual([
      { type: 'cancel', epoch },
      { type: 'start', epoch },
      { type: 'heartbeat', epoch, seq: 3 },
    ]);
    expect(heard).toHaveLength(3); // the task manager answers from now on
  });

  it('a task manager that says hello and then stays silent while restoring is declared dead after timeoutMs; the next attempt restores exactly-once', async () => {
    const seed = 7;
    console.log(`seed ${seed}`);
    // Steps cost no virtual time: only timers move the clock, so the heartbeat arithmetic below is exact.
    const world = new SimWorld(seed, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const count = 3_000;
    const keys = 20;
    const sink = new CollectSink<string>();
    const env = StreamEnvironment.create({
      parallelism: 2,
      checkpointing: { intervalMs: 20 },
      heartbeat: { intervalMs: 50, timeoutMs: 500 },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 10 },
    });
    buildKeyedCountJob(env, sink, { count, keys, ratePerSec: 10_000 });
    const events: Array<{ at: number; event: JobEvent }> = [];
    let master: JobMaster | null = null;
    let silent = false;
    const lost: string[] = [];
    const client = await env.executeAsync('silent-restore', {
      env: world.environment,
      inMemoryTaskManagers: 2,
      onJobMaster: (m) => (master = m),
      onEvent: (event) => {
        events.push({ at: world.now(), event });
        // The first attempt fails once a checkpoint completed; in the second, task manager 1 hangs while it restores.
        if (event.type === 'checkpoint-completed' && !events.some((e) => e.event.type === 'restarting')) master!.failGlobal(new Error('fail attempt 0'));
        if (event.type === 'restarting') silent = event.attempt === 1;
      },
      loseControlMessage: (tm, m) => {
        const lose = silent && tm === 1 && m.type !== 'hello';
        if (lose) lost.push(m.type);
        return lose;
      },
    });
    let settled = false;
    client.result.finally(() => (settled = true)).catch(() => {});
    // As the simulator drives a job: a step, then the real event loop (storage and other promises
    // settle there), so virtual time never runs ahead of work still in flight.
    // A step cap too: a chain of events that moves no virtual time fails the test instead of hanging it.
    while (!settled && world.now() < 60_000 && world.steps < 3_000_000) {
      const stepped = world.step();
      await yieldToEventLoop();
      if (!stepped && world.idle) break; // nothing left to run: the job hangs
    }
    expect(settled, `the job neither finished nor failed by ${world.now().toFixed(0)} virtual ms (${world.steps} steps)`).toBe(true);
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(2);
    const restarts = events.flatMap(({ at, event }) => (event.type === 'restarting' ? [{ at, attempt: event.attempt, cause: event.cause }] : []));
    expect(restarts.map((r) => r.attempt)).toEqual([1, 2]);
    expect(restarts[1]!.cause).toMatch(/^task manager 1 died while deploying: no heartbeat answered for \d+ ms \(heartbeat\.timeoutMs 500\)$/);
    // Declared dead at the first heartbeat tick after timeoutMs of silence since its hello: the restart
    // delay (10 ms), then 500 ms, then at most one interval (50 ms; ticks start with the deploy).
    const silentForMs = restarts[1]!.at - restarts[0]!.at;
    expect(silentForMs).toBeGreaterThan(10 + 500);
    expect(silentForMs).toBeLessThanOrEqual(10 + 500 + 50);
    // Task manager 1 of attempt 1 deployed in silence: its 'deployed' answer was among the lost.
    expect(lost).toContain('deployed');
    expect(lost).toContain('heartbeat');
    const running = events.flatMap(({ event }) => (event.type === 'running' ? [event] : []));
    const first = events.find(({ event }) => event.type === 'checkpoint-completed')!.event;
    expect(running.map((e) => e.attempt)).toEqual([0, 2]);
    expect(running[1]!.restoredFrom).toBe(first.type === 'checkpoint-completed' ? first.stats.checkpointId : -1);
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(count, keys));
  });
});
