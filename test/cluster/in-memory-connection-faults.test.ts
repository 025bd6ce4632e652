/**
 * Faults of the TCP model on in-memory task managers (issue 24 item 6), on the simulator's
 * virtual clock: a control connection that drops (the job master's pool reports the task manager
 * failed, the task manager stops), a data connection that drops (both task managers fail the
 * subtasks using it; the pool is kept and the connection made again), a process that exits (its
 * peers and the job master learn it at once), and a partition that heals: before the heartbeat
 * timeout it only delays (in order), after it the job master has moved on and the task manager
 * learns at the heal that its job master closed the connection, and stops. Each ends exactly-once.
 */
import { describe, expect, it } from 'vitest';
import { DataConnection, HoldableEnd } from '../../src/cluster/launchers/in-memory-connections.ts';
import type { InMemoryPoolFaults, InMemoryTaskManagerFaults } from '../../src/cluster/launchers/in-memory-task-managers.ts';
import type { DataMessage } from '../../src/cluster/transport/protocol.ts';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import type { JobEvent } from '../../src/index.ts';
import { inMemoryLinkPair } from '../../src/runtime/network/link.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { driveUntilSettled } from '../support/drive.ts';
import { expectedRunningCounts, sortedCopy } from '../support/jobs.ts';
import { KEYED_COUNT_KEYS, KEYED_COUNT_RECORDS, keyedCountWorld } from '../support/keyed-count-world.ts';

const COUNT = KEYED_COUNT_RECORDS;
const KEYS = KEYED_COUNT_KEYS;
const HEARTBEAT = { intervalMs: 10, timeoutMs: 100 };

interface Run {
  readonly pools: InMemoryPoolFaults[];
  readonly restarts: Array<{ at: number; cause: string }>;
  readonly struckAt: number;
  readonly lostJobMaster: Array<{ index: number; closedByJobMaster: boolean; at: number }>;
  readonly healed: Array<{ index: number; at: number }>;
}

/** A keyed count at parallelism 2 on two in-memory task managers; `strike` hits the pool as the first checkpoint completes. */
async function runStruck(seed: number, strike: (pool: InMemoryPoolFaults) => boolean): Promise<Run> {
  console.log(`seed ${seed}`);
  const { world, sink, env } = keyedCountWorld(seed, { heartbeat: HEARTBEAT, cancellationTimeoutMs: 50 });
  const pools: InMemoryPoolFaults[] = [];
  const restarts: Run['restarts'] = [];
  const lostJobMaster: Run['lostJobMaster'] = [];
  const healed: Run['healed'] = [];
  let struckAt: number | null = null;
  const faults: InMemoryTaskManagerFaults = {
    launched: (pool) => pools.push(pool),
    lostJobMaster: (index, closedByJobMaster) => lostJobMaster.push({ index, closedByJobMaster, at: world.now() }),
    healed: (index) => healed.push({ index, at: world.now() }),
  };
  const client = await env.executeAsync('connection-faults', {
    env: world.environment,
    inMemoryTaskManagers: 2,
    taskManagerFaults: faults,
    onEvent: (event: JobEvent) => {
      if (event.type === 'restarting') restarts.push({ at: world.now(), cause: event.cause });
      if (event.type === 'checkpoint-completed' && struckAt === null) {
        struckAt = world.now();
        expect(strike(pools[0]!)).toBe(true);
      }
    },
  });
  const settled = await driveUntilSettled(world, client.result);
  expect(settled, `the job neither finished nor failed by ${world.now().toFixed(0)} virtual ms`).toBe(true);
  // What is still scheduled after the end (a partition's heal) runs too.
  while (world.now() < struckAt! + 1_000 && world.step()) await yieldToEventLoop();
  const result = await client.result;
  expect(result.status).toBe('FINISHED');
  expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(COUNT, KEYS));
  return { pools, restarts, struckAt: struckAt!, lostJobMaster, healed };
}

describe('in-memory connections, modelled on TCP', () => {
  it('a held end delivers what arrived, in order, once released; a connection that ends meanwhile drops it and is told at the release', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const [a, b] = inMemoryLinkPair<number, number>(world);
    const held = new HoldableEnd<number, number>(world);
    held.attach(b);
    const events: string[] = [];
    held.onMessage((n) => events.push(`got ${n}`));
    held.onClose((e) => events.push(`learned: ${e.message}`));
    held.hold();
    for (let i = 1; i <= 5; i++) a.send(i);
    while (world.step()) {}
    expect(events).toEqual([]);
    held.unhold();
    expect(events).toEqual(['got 1', 'got 2', 'got 3', 'got 4', 'got 5']);

    events.length = 0;
    held.hold();
    a.send(6);
    while (world.step()) {}
    a.end(new Error('the job master closed the connection'));
    while (world.step()) {}
    expect(events).toEqual([]);
    held.unhold();
    expect(events).toEqual(['learned: the job master closed the connection']);
  });

  it('what arrives before the owner listens waits for its handler, in order (it spun for ever: a message the loop could not hand over was never taken)', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const [a, b] = inMemoryLinkPair<number, number>(world);
    const end = new HoldableEnd<number, number>(world);
    end.attach(b);
    a.send(1);
    a.send(2);
    let steps = 0;
    while (world.step()) steps++;
    expect(steps).toBe(2);
    const got: number[] = [];
    end.onMessage((n) => got.push(n));
    expect(got).toEqual([1, 2]);
    a.send(3);
    while (world.step()) {}
    expect(got).toEqual([1, 2, 3]);
  });

  it('a data connection that broke is made again once both ends were told, and carries messages again', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const c = new DataConnection<DataMessage>(world, [() => 0, () => 0], () => true);
    const [x, y] = c.ends;
    const got: number[] = [];
    const told: string[] = [];
    y.onMessage((m) => got.push(m.type === 'credit' ? m.buffers : -1));
    x.onClose(() => told.push('x'));
    y.onClose(() => told.push('y'));
    x.send({ type: 'credit', channel: 0, buffers: 1 });
    expect(c.reset(new Error('connection reset'))).toBe(true);
    expect(c.reset(new Error('connection reset'))).toBe(false); // down until both learned
    x.send({ type: 'credit', channel: 0, buffers: 2 }); // before x learned: lost
    while (world.step()) {}
    expect(told.sort()).toEqual(['x', 'y']);
    expect(x.connected && y.connected).toBe(true);
    x.send({ type: 'credit', channel: 0, buffers: 3 });
    while (world.step()) {}
    expect(got).toEqual([3]);
  });

  it.each([1, 2])(
    'seed %i: a dropped control connection fails the task manager at once; it stops, and the next attempt runs on new task managers',
    async (seed) => {
      const run = await runStruck(seed, (pool) => pool.dropControl(1) && !pool.dropControl(1));
      expect(run.restarts).toHaveLength(1);
      expect(run.restarts[0]!.cause).toMatch(/task manager 1 died: control connection closed: connection reset/);
      // Learned from the connection, not from missed heartbeats.
      expect(run.restarts[0]!.at - run.struckAt).toBeLessThan(HEARTBEAT.timeoutMs);
      expect(run.lostJobMaster).toEqual([{ index: 1, closedByJobMaster: false, at: expect.any(Number) }]);
      expect(run.pools).toHaveLength(2);
      expect(run.pools[0]!.down).toBe(true);
    },
  );

  it.each([1, 2])(
    'seed %i: a dropped data connection fails the subtasks using it, naming the peer; the pool is kept and the connection made again',
    async (seed) => {
      const run = await runStruck(seed, (pool) => pool.dropData(0, 1));
      expect(run.restarts).toHaveLength(1);
      expect(run.restarts[0]!.cause).toMatch(/data connection to task manager [01] lost: connection reset/);
      expect(run.restarts[0]!.at - run.struckAt).toBeLessThan(HEARTBEAT.timeoutMs);
      // Both task managers lived: the next attempt ran on them, over the connection made again.
      expect(run.pools).toHaveLength(1);
      expect(run.lostJobMaster).toEqual([]);
    },
  );

  it.each([1, 2])('seed %i: a process that exits is found at once by the job master and its peer (no heartbeat timeout)', async (seed) => {
    const run = await runStruck(seed, (pool) => pool.kill(1) && !pool.kill(1) && !pool.hang(1));
    expect(run.restarts).toHaveLength(1);
    expect(run.restarts[0]!.cause).toMatch(
      /task manager 1 died: control connection closed: its process exited|data connection to task manager 1 lost: its process exited/,
    );
    expect(run.restarts[0]!.at - run.struckAt).toBeLessThan(HEARTBEAT.timeoutMs);
    expect(run.pools).toHaveLength(2);
  });

  it.each([1, 2])('seed %i: a partition that heals before the heartbeat timeout only delays: held messages arrive in order, nothing restarts', async (seed) => {
    const run = await runStruck(seed, (pool) => pool.partition(1, 40) && !pool.partition(1, 40));
    expect(run.restarts).toEqual([]);
    expect(run.healed.map((h) => h.index)).toEqual([1]);
    expect(run.healed[0]!.at - run.struckAt).toBeGreaterThanOrEqual(40 - 1e-6);
    expect(run.lostJobMaster).toEqual([]);
    expect(run.pools).toHaveLength(1);
  });

  it.each([1, 2])('seed %i: a partition longer than the heartbeat timeout: the job master moves on, and the task manager stops when it heals', async (seed) => {
    const HEAL_MS = 400;
    const run = await runStruck(seed, (pool) => pool.partition(1, HEAL_MS));
    expect(run.restarts[0]!.cause).toMatch(/task manager 1 died: no heartbeat answered/);
    expect(run.restarts[0]!.at - run.struckAt).toBeGreaterThanOrEqual(HEARTBEAT.timeoutMs);
    expect(run.restarts[0]!.at - run.struckAt).toBeLessThan(HEAL_MS);
    // At the heal it learned that the job master had closed its connection, and stopped.
    expect(run.healed.map((h) => h.index)).toEqual([1]);
    expect(run.lostJobMaster).toEqual([{ index: 1, closedByJobMaster: true, at: run.healed[0]!.at }]);
    expect(run.pools.length).toBeGreaterThanOrEqual(2);
    expect(run.pools[0]!.down).toBe(true);
  });
});
