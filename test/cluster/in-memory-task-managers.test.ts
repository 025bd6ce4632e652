/**
 * The exactly-once suites with subtasks spread over two task managers in this thread, over the
 * in-memory transport: every channel between them serialized with credits, barriers (aligned and
 * unaligned, overtaking on both ends) in the same stream, control messages through the protocol,
 * and the FaultInjector reaching into the task managers' subtasks.
 */
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import { FaultPlan, TWO_INPUT_JOB_FAULTS } from '../support/fault-plan.ts';
import { whenRunning } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { baseOptions, buildKeyedCountJob, buildTwoInputJob, expectedCounts, sortedCopy, tempDir, until, type TwoInputJobOptions } from '../support/jobs.ts';

const JOB: TwoInputJobOptions = { countA: 30_000, countB: 9_000, keys: 50, slowBMicros: 20 };
const FAULTS = TWO_INPUT_JOB_FAULTS;

type Mode = { name: string; unaligned: boolean };
const MODES: Mode[] = [
  { name: 'aligned', unaligned: false },
  { name: 'unaligned', unaligned: true },
];

async function run(mode: Mode, faults?: FaultPlan) {
  const env = StreamEnvironment.create(
    baseOptions({ checkpointStorage: tempDir(), checkpointing: { intervalMs: 5, retention: 'retain-on-cancel', retained: 2, unaligned: mode.unaligned } }),
  );
  const sink = new CollectSink<string>();
  buildTwoInputJob(env, sink, JOB);
  let master: JobMaster | null = null;
  const result = await env.execute('in-memory-tms', { faults, inMemoryTaskManagers: 2, onJobMaster: (m) => (master = m) });
  return { result, sink, master: master! };
}

describe.each(MODES)('two in-memory task managers, $name checkpoints', (mode) => {
  const expected = expectedCounts(JOB);

  it('commit the exact output', async () => {
    const { result, sink } = await run(mode);
    expect(result.restarts).toBe(0);
    expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
    const completed = result.checkpoints.filter((c) => c.status === 'COMPLETED');
    expect(completed.length).toBeGreaterThan(1);
    if (mode.unaligned) expect(completed.some((c) => c.subtasks.some((s) => s.metrics.channelStateBytes > 0))).toBe(true);
  });

  it.each(FAULTS.map((fault) => [`${fault.site} at ${fault.vertex}`, fault] as const))('recover exactly-once from %s', async (_n, fault) => {
    const plan = new FaultPlan([fault]);
    const { result, sink } = await run(mode, plan);
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
  });
});

describe('figures from task managers', () => {
  it('reach metrics() while the subtasks run, not only with heartbeat answers', async () => {
    const gate = new SourceGate(0);
    const env = StreamEnvironment.create({
      parallelism: 2,
      // No heartbeat is answered during this test: the figures must come on their own.
      heartbeat: { intervalMs: 600_000, timeoutMs: 1_200_000 },
    });
    buildKeyedCountJob(env, new CollectSink<string>(), { count: 4_000, keys: 20, gate });
    const client = await env.executeAsync('figures', { inMemoryTaskManagers: 2 });
    await whenRunning(client);
    gate.allowUpTo(500);
    await gate.reached(2);
    await until('both source subtasks counted in metrics()', () => client.metrics().recordsIn === 1_000);
    gate.allowUpTo(1_500);
    await gate.reached(2);
    await until('the next 2,000 records counted', () => client.metrics().recordsIn === 3_000);
    gate.open();
    expect((await client.result).status).toBe('FINISHED');
    expect(client.metrics().recordsIn).toBe(4_000);
  });
});
