import { describe, expect, it } from 'vitest';
import { CollectSink, ConfigError, StreamEnvironment } from '../../src/index.ts';
import { FaultPlan, TWO_INPUT_JOB_FAULTS } from '../support/fault-plan.ts';
import { baseOptions, buildTwoInputJob, expectedCounts, sortedCopy, tempDir, type TwoInputJobOptions } from '../support/jobs.ts';

// Paced by checkpoints: neither input (13,333 and 4,000 records a subtask) can end before three of
// them. A's pace is loose enough that A still outruns the keyed operator: barriers find full queues.
// The keyed operator spends 20 us on each A record, so A's 4,000 records between two snapshots take
// longer than the 5 ms interval and its queue into the operator (4 x 64 records, ~5 ms of work) is
// full when a barrier joins it: barriers overtake it (unaligned) or wait behind it past the 2 ms
// alignment timeout. Without it, that queue drained in under 2 ms and the timeout was passed only
// while a blocking fsync held the thread (before 3e131ff moved fsyncs off it): the test leaned on
// that stall.
const JOB: TwoInputJobOptions = {
  countA: 40_000,
  countB: 12_000,
  keys: 50,
  slowBMicros: 20,
  slowKeyedAMicros: 20,
  recordsPerCheckpoint: { a: 4_000, b: 1_000 },
};
const FAULTS = TWO_INPUT_JOB_FAULTS;

type Variant = { name: string; unaligned: true; alignedCheckpointTimeoutMs: number };
const VARIANTS: Variant[] = [
  { name: 'unaligned', unaligned: true, alignedCheckpointTimeoutMs: 0 },
  { name: 'aligned with a 2 ms timeout', unaligned: true, alignedCheckpointTimeoutMs: 2 },
];

async function run(variant: Variant, faults?: FaultPlan) {
  const env = StreamEnvironment.create(
    baseOptions({
      checkpointStorage: tempDir(),
      checkpointing: {
        intervalMs: 5,
        retention: 'retain-on-cancel',
        retained: 2,
        unaligned: variant.unaligned,
        alignedCheckpointTimeoutMs: variant.alignedCheckpointTimeoutMs,
      },
    }),
  );
  const sink = new CollectSink<string>();
  buildTwoInputJob(env, sink, JOB);
  const result = await env.execute('unaligned', { faults });
  return { result, sink };
}

describe.each(VARIANTS)('$name checkpoints', (variant) => {
  const expected = expectedCounts(JOB);

  it('persist in-flight data under backpressure and commit the exact output', async () => {
    const { result, sink } = await run(variant);
    expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
    const unaligned = result.checkpoints.filter((c) => c.status === 'COMPLETED' && c.subtasks.some((s) => s.metrics.unaligned));
    expect(unaligned.length).toBeGreaterThan(0);
    // Always-unaligned barriers overtake full queues, so in-flight data is persisted; after a timeout
    // switch the queues may hold nothing ahead of the barriers, so only the switch is certain.
    if (variant.alignedCheckpointTimeoutMs === 0) expect(unaligned.some((c) => c.subtasks.some((s) => s.metrics.channelStateBytes > 0))).toBe(true);
  });

  it.each(FAULTS.map((fault) => [`${fault.site} at ${fault.vertex}`, fault] as const))('recover exactly-once from %s', async (_n, fault) => {
    const plan = new FaultPlan([fault]);
    const { result, sink } = await run(variant, plan);
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
  });
});

describe('unaligned option combinations', () => {
  it.each([
    [{ unaligned: true, mode: 'at-least-once' }, 'checkpointing.unaligned', "needs mode 'exactly-once'"],
    [{ unaligned: true, maxConcurrent: 2 }, 'checkpointing.unaligned', 'needs maxConcurrent 1'],
    [{ alignedCheckpointTimeoutMs: 100 }, 'checkpointing.alignedCheckpointTimeoutMs', 'only applies with unaligned: true'],
    [{ unaligned: true, alignedCheckpointTimeoutMs: -1 }, 'checkpointing.alignedCheckpointTimeoutMs', 'got -1'],
    [{ unaligned: 'yes' }, 'checkpointing.unaligned', 'true or false'],
  ])('rejects %j naming %s', (checkpointing, option, detail) => {
    let error: unknown;
    try {
      StreamEnvironment.create({ checkpointing: checkpointing as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).option).toBe(option);
    expect((error as Error).message).toContain(detail);
  });
});
