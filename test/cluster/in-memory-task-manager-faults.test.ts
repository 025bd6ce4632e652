/**
 * Task managers kept warm across attempts, on the simulator's virtual clock:
 * frames and credits an attempt sent that arrive after it was cancelled reach a task manager the
 * next attempt reuses and must be dropped there, never delivered to the new attempt's channels
 * (channels are numbered per attempt); and a task manager stuck in user code on cancel is ended
 * by the cancellation watchdog and never deployed to again.
 */
import { describe, expect, it } from 'vitest';
import type { InMemoryTaskManagerFaults } from '../../src/cluster/launchers/in-memory-task-managers.ts';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import type { JobEvent } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import { expectedRunningCounts, sortedCopy } from '../support/jobs.ts';
import { KEYED_COUNT_KEYS, KEYED_COUNT_RECORDS, keyedCountWorld } from '../support/keyed-count-world.ts';

const COUNT = KEYED_COUNT_RECORDS;
const KEYS = KEYED_COUNT_KEYS;

/** A keyed count at parallelism 2 on two in-memory task managers; it fails once, right after its first checkpoint. */
async function runFailingOnce(seed: number, faults: InMemoryTaskManagerFaults) {
  const { world, sink, env } = keyedCountWorld(seed, { cancellationTimeoutMs: 50 });
  let master: JobMaster | null = null;
  const events: JobEvent[] = [];
  const client = await env.executeAsync('warm-task-managers', {
    env: world.environment,
    inMemoryTaskManagers: 2,
    taskManagerFaults: faults,
    onJobMaster: (m) => (master = m),
    onEvent: (e) => {
      events.push(e);
      if (e.type === 'checkpoint-completed' && !events.some((x) => x.type === 'restarting'))
        world.schedule(0, () => master!.failGlobal(new Error('fail the first attempt')));
    },
  });
  let settled = false;
  client.result.finally(() => (settled = true)).catch(() => {});
  while (!settled && world.now() < 60_000) {
    const stepped = world.step();
    await yieldToEventLoop();
    if (!stepped && world.idle) break;
  }
  expect(settled, `the job neither finished nor failed by ${world.now().toFixed(0)} virtual ms`).toBe(true);
  return { result: await client.result, sink, events };
}

describe('in-memory task managers reused across attempts', () => {
  it.each([1, 2, 3])('seed %i: frames and credits of the cancelled attempt arrive late and are dropped, never delivered to the next', async (seed) => {
    console.log(`seed ${seed}`);
    let stale = 0;
    let cancels = 0;
    const { result, sink } = await runFailingOnce(seed, {
      // Every data link into a task manager told to cancel the first attempt stalls for 30 virtual ms:
      // what was in flight arrives after the next attempt (restart delay 5 ms) deployed its channels.
      dataStallMs: (_to, cause) => (cause === 'cancel' && cancels++ < 2 ? 30 : 0),
      staleData: () => stale++,
    });
    expect(result.status).toBe('FINISHED');
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(COUNT, KEYS));
    expect(result.restarts).toBe(1);
    // The path was taken: late data met the next attempt's channels on a reused task manager.
    expect(stale).toBeGreaterThan(0);
  });

  it('a task manager stuck in user code on cancel is ended by the watchdog; the next attempt runs on fresh ones', async () => {
    const violations: string[] = [];
    let stuck = 0;
    const { result, sink, events } = await runFailingOnce(4, {
      stuckOnCancel: (index) => index === 1 && stuck++ === 0,
      violation: (m) => violations.push(m),
    });
    expect(stuck).toBeGreaterThan(0);
    const logs = events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logs.some((m) => /task manager 1 did not stop its subtasks within cancellationTimeoutMs \(50 ms\): terminated/.test(m))).toBe(true);
    expect(violations).toEqual([]);
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(COUNT, KEYS));
  });
});
