/**
 * Aligned checkpoints with an alignment timeout, on the simulator's virtual clock: under backpressure the timeout fires while barriers wait behind full channels, the
 * subtask switches to unaligned and pulls those barriers forward, and the buffers queued ahead of
 * them become channel state of the checkpoint. The job then restores the first checkpoint that
 * persisted in-flight data: none of those buffers may be lost (or repeated), so the counts are
 * exact.
 */
import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import { CollectSink, StreamEnvironment, type JobEvent } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { buildKeyedCountJob, expectedRunningCounts, sortedCopy } from '../support/jobs.ts';

const COUNT = 2_000;
const KEYS = 20;

async function runSwitchingJob(seed: number) {
  // Steps cost virtual time and sources never wait, so channels stay full (backpressure).
  const world = new SimWorld(seed, { stepCostMsMax: 0.5, slowProbability: 0, slowDelayMsMax: 0 });
  const sink = new CollectSink<string>();
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointing: { intervalMs: 10, unaligned: true, alignedCheckpointTimeoutMs: 1 },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
    bufferRecords: 4,
    channelCapacity: 2,
  });
  buildKeyedCountJob(env, sink, { count: COUNT, keys: KEYS, ratePerSec: 10_000_000 });
  let master: JobMaster | null = null;
  let restoredFrom: number | null = null;
  let inflightCheckpoint: number | null = null;
  const client = await env.executeAsync('timeout-switch', {
    env: world.environment,
    onJobMaster: (m) => (master = m),
    onEvent: (e: JobEvent) => {
      if (e.type === 'checkpoint-completed' && inflightCheckpoint === null && e.stats.subtasks.some((s) => s.metrics.channelStateBytes > 0)) {
        inflightCheckpoint = e.stats.checkpointId;
        world.schedule(0, () => master!.failGlobal(new Error(`restore checkpoint ${e.stats.checkpointId}, which holds in-flight data`)));
      }
      if (e.type === 'running' && e.restoredFrom !== null) restoredFrom = e.restoredFrom;
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
  return { result: await client.result, sink, inflightCheckpoint, restoredFrom };
}

describe('switch from aligned to unaligned on the alignment timeout', () => {
  it.each([1, 2, 3])('seed %i: buffers ahead of the pulled-forward barriers are channel state; restoring it loses none', async (seed) => {
    console.log(`seed ${seed}`);
    const { result, sink, inflightCheckpoint, restoredFrom } = await runSwitchingJob(seed);
    expect(result.status).toBe('FINISHED');
    expect(inflightCheckpoint).not.toBeNull();
    expect(restoredFrom).toBe(inflightCheckpoint);
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(COUNT, KEYS));
  });
});
