/**
 * The keyed count (jobs.ts) at parallelism 2 in a seeded world with small buffers and quick
 * restarts: the job the in-memory task manager fault tests (deaths, connection drops, stalls)
 * strike. Each test adds its own settings (heartbeats, the cancellation watchdog).
 */
import { CollectSink, StreamEnvironment, type StreamEnvironmentOptions } from '../../src/index.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { buildKeyedCountJob } from './jobs.ts';

export const KEYED_COUNT_RECORDS = 3_000;
export const KEYED_COUNT_KEYS = 20;

export function keyedCountWorld(seed: number, options: StreamEnvironmentOptions = {}): { world: SimWorld; sink: CollectSink<string>; env: StreamEnvironment } {
  const world = new SimWorld(seed, { stepCostMsMax: 0.2, slowProbability: 0, slowDelayMsMax: 0 });
  const sink = new CollectSink<string>();
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointing: { intervalMs: 20 },
    restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 5 },
    bufferRecords: 8,
    channelCapacity: 2,
    ...options,
  });
  buildKeyedCountJob(env, sink, { count: KEYED_COUNT_RECORDS, keys: KEYED_COUNT_KEYS, ratePerSec: 20_000 });
  return { world, sink, env };
}
