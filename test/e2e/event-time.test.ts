import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import type { StreamEnvironmentOptions } from '../../src/index.ts';
import type { FaultSite } from '../../src/runtime/faults.ts';
import { FaultPlan, type PlannedFault } from '../support/fault-plan.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { baseOptions, sortedCopy, tempDir } from '../support/jobs.ts';
import { BUCKETS_UID, buildEventTimeJob, expectedBucketSums } from '../support/event-time-job.ts';

const COUNT = 12_000;
const KEYS = 30;
const f = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

async function runJob(
  options: StreamEnvironmentOptions,
  faults?: FaultPlan,
  onFire?: (watermarkMs: number) => void,
  inMemoryTaskManagers?: number,
  slowMicros?: number,
) {
  const dir = tempDir();
  const env = StreamEnvironment.create(
    baseOptions({
      autoWatermarkIntervalMs: 2,
      checkpointStorage: dir,
      ...options,
      checkpointing: { intervalMs: 5, retention: 'retain-on-cancel', retained: 2, ...options.checkpointing },
    }),
  );
  const sink = new CollectSink<string>();
  // 500 records per source subtask between snapshots: the input lasts several checkpoints.
  buildEventTimeJob(env, sink, { count: COUNT, keys: KEYS, sourceParallelism: 2, hold: { recordsPerCheckpoint: 500 }, onFire, slowMicros });
  const result = await env.execute('event-time', { faults, inMemoryTaskManagers });
  return { result, sink };
}

describe('event time: out-of-order events, bounded out-of-orderness, event-time timers', () => {
  const expected = expectedBucketSums(COUNT, KEYS);

  it('a failure-free run emits every (key, bucket) once, at its timer, with the sum of its events', async () => {
    const firedAt: number[] = [];
    const { result, sink } = await runJob({}, undefined, (w) => firedAt.push(w));
    expect(result.restarts).toBe(0);
    expect(sortedCopy(sink.results())).toEqual(expected);
    // Watermarks advanced while the input lasted: most timers fired before the final (maximum) watermark.
    expect(firedAt.length).toBe(expected.length);
    expect(firedAt.filter((w) => Number.isFinite(w)).length).toBeGreaterThan(expected.length / 2);
    // Every timer fired and removed itself: nothing is pending in the last checkpoint.
    const meta = await readCheckpointMetadataAt(result.lastCheckpointLocation!);
    expect((await keyedStateAt(meta, BUCKETS_UID, '_timers/user')).size).toBe(0);
    expect((await keyedStateAt(meta, BUCKETS_UID, 'sums')).size).toBe(0);
  });

  const FAULTS: Array<[string, StreamEnvironmentOptions, PlannedFault]> = [
    ['heap, process in the timer operator', {}, f('process', 'buckets', 30, 1)],
    ['heap, sync phase of the timer operator', {}, f('sync-phase', 'buckets', 3, 0)],
    ['heap, async phase of the source', {}, f('async-phase', 'gen', 2, 1)],
    ['heap, commit', {}, f('commit', 'buckets', 2, 2)],
    ['embedded incremental, process in the timer operator', { stateBackend: 'embedded' }, f('process', 'buckets', 50, 2)],
    ['embedded incremental, before the ack', { stateBackend: 'embedded' }, f('before-ack', 'buckets', 3, 1)],
    ['heap, unaligned checkpoints, process', { checkpointing: { unaligned: true } }, f('process', 'buckets', 40, 0)],
    ['embedded, unaligned checkpoints, sync phase', { stateBackend: 'embedded', checkpointing: { unaligned: true } }, f('sync-phase', 'buckets', 4, 2)],
  ];

  // Two task managers over the in-memory transport: timestamps and watermarks cross in wire frames,
  // and unaligned barriers overtake watermarks on both ends of a serialized channel.
  it.each([false, true])('two task managers (serialized channels), unaligned %s, a failure in the timer operator: exactly-once', async (unaligned) => {
    const plan = new FaultPlan([f('process', 'buckets', 35, 1)]);
    const { result, sink } = await runJob({ checkpointing: { unaligned } }, plan, undefined, 2, 20);
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(expected);
    if (unaligned) expect(result.checkpoints.some((c) => c.status === 'COMPLETED' && c.subtasks.some((s) => s.metrics.channelStateBytes > 0))).toBe(true);
  });

  it.each(FAULTS)('recovers exactly-once against the fault-free result: %s', async (_name, options, fault) => {
    const plan = new FaultPlan([fault]);
    const { result, sink } = await runJob(options, plan);
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(expected);
  });
});
