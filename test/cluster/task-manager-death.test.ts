/**
 * An in-memory task manager that dies silently (issue 23 item 1; `hang` since issue 24, where
 * `kill` closes its connections as a process death does), on the simulator's virtual clock:
 * its subtasks stop, its links drop what is in flight and deliver nothing more, and nothing calls
 * the job master back. The job master finds it only by missed heartbeats (after timeoutMs), fails
 * the attempt and restarts it on new task managers, exactly-once.
 */
import { describe, expect, it } from 'vitest';
import type { InMemoryPoolFaults } from '../../src/cluster/launchers/in-memory-task-managers.ts';
import type { JobEvent } from '../../src/index.ts';
import { driveUntilSettled } from '../support/drive.ts';
import { expectedRunningCounts, sortedCopy } from '../support/jobs.ts';
import { KEYED_COUNT_KEYS, KEYED_COUNT_RECORDS, keyedCountWorld } from '../support/keyed-count-world.ts';

const COUNT = KEYED_COUNT_RECORDS;
const KEYS = KEYED_COUNT_KEYS;
const HEARTBEAT = { intervalMs: 10, timeoutMs: 100 };

describe('an in-memory task manager that dies silently', () => {
  it.each([1, 2])('seed %i: is found by missed heartbeats only; the attempt restarts on new task managers, exactly-once', async (seed) => {
    console.log(`seed ${seed}`);
    const { world, sink, env } = keyedCountWorld(seed, { heartbeat: HEARTBEAT });
    const pools: InMemoryPoolFaults[] = [];
    const events: Array<{ at: number; event: JobEvent }> = [];
    let killedAt: number | null = null;
    const client = await env.executeAsync('task-manager-death', {
      env: world.environment,
      inMemoryTaskManagers: 2,
      taskManagerFaults: { launched: (pool) => pools.push(pool) },
      onEvent: (event) => {
        events.push({ at: world.now(), event });
        if (event.type === 'checkpoint-completed' && killedAt === null) {
          killedAt = world.now();
          expect(pools[0]!.hang(1)).toBe(true);
          expect(pools[0]!.hang(1)).toBe(false); // dead already
        }
      },
    });
    const settled = await driveUntilSettled(world, client.result);
    expect(settled, `the job neither finished nor failed by ${world.now().toFixed(0)} virtual ms`).toBe(true);
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(COUNT, KEYS));
    const restart = events.find((e) => e.event.type === 'restarting')!;
    const cause = restart.event.type === 'restarting' ? restart.event.cause : '';
    expect(cause).toMatch(/task manager 1 died: no heartbeat answered for \d+ ms \(heartbeat\.timeoutMs 100\)/);
    // Nothing called back: the job master noticed no sooner than the heartbeat timeout after the death.
    expect(restart.at - killedAt!).toBeGreaterThanOrEqual(HEARTBEAT.timeoutMs);
    expect(restart.at - killedAt!).toBeLessThan(HEARTBEAT.timeoutMs + 3 * HEARTBEAT.intervalMs);
    // The next attempt ran on new task managers; the pool with the dead one was shut down.
    expect(pools).toHaveLength(2);
    expect(pools[0]!.down).toBe(true);
  });
});
