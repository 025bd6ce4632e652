import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import type { FaultSite } from '../../src/runtime/faults.ts';
import { FaultPlan, type PlannedFault } from '../support/fault-plan.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { baseOptions, buildTwoInputJob, expectedCounts, KEYED_UID, sortedCopy, tempDir, type TwoInputJobOptions } from '../support/jobs.ts';

// Paced by checkpoints: B (4,000 records a subtask) cannot end before three of them, A before twelve.
const JOB: TwoInputJobOptions = { countA: 40_000, countB: 12_000, keys: 50, slowBMicros: 20, recordsPerCheckpoint: { a: 1_000, b: 1_000 } };

const f = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

/** Failure points: inside operators, in the sync phase, in the async phase, after the snapshot before the ack, while committing. */
const FAULTS: PlannedFault[] = [
  f('process', 'keyed-co-process', 5),
  f('process', 'keyed-co-process', 40, 1),
  f('process', 'keyed-co-process', 120, 2),
  f('process', 'gen-a', 3, 0),
  f('process', 'gen-b', 30, 2),
  f('process', 'map-b', 25, 1),
  f('sync-phase', 'gen-a', 1, 0),
  f('sync-phase', 'gen-b', 2, 1),
  f('sync-phase', 'keyed-co-process', 1, 0),
  f('sync-phase', 'keyed-co-process', 2, 2),
  f('sync-phase', 'map-b', 2, 0),
  f('async-phase', 'gen-a', 2, 1),
  f('async-phase', 'keyed-co-process', 1, 1),
  f('async-phase', 'keyed-co-process', 2, 0),
  f('async-phase', 'map-b', 2, 2),
  f('before-ack', 'gen-b', 1, 0),
  f('before-ack', 'keyed-co-process', 2, 2),
  f('before-ack', 'keyed-co-process', 3, 0),
  f('before-ack', 'map-b', 2, 1),
  f('commit', 'keyed-co-process', 1, 0),
  f('commit', 'keyed-co-process', 2, 1),
];

async function runJob(mode: 'exactly-once' | 'at-least-once', faults: FaultPlan | undefined, job: TwoInputJobOptions = JOB) {
  const dir = tempDir();
  const env = StreamEnvironment.create(
    baseOptions({ checkpointStorage: dir, checkpointing: { intervalMs: 5, mode, retention: 'retain-on-cancel', retained: 2 } }),
  );
  const sink = new CollectSink<string>();
  buildTwoInputJob(env, sink, job);
  const result = await env.execute('two-input', { faults });
  return { result, sink, dir };
}

describe('exactly-once under failure (parallelism 3)', () => {
  const expected = expectedCounts(JOB);

  it('a failure-free run commits the expected output', async () => {
    const { result, sink } = await runJob('exactly-once', undefined);
    expect(result.restarts).toBe(0);
    expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
  });

  it.each(FAULTS.map((fault) => [`${fault.site} at ${fault.vertex}#${fault.subtask ?? '*'} (call ${fault.nth})`, fault] as const))(
    'recovers with exactly-once output and state: %s',
    async (_name, fault) => {
      const plan = new FaultPlan([fault]);
      const { result, sink } = await runJob('exactly-once', plan);
      expect(plan.fired.length).toBe(1);
      expect(result.restarts).toBe(1);
      expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
      const metadata = await readCheckpointMetadataAt(result.lastCheckpointLocation!);
      const countA = await keyedStateAt(metadata, KEYED_UID, 'countA');
      const countB = await keyedStateAt(metadata, KEYED_UID, 'countB');
      expect(new Map([...countA].map(([k, v]) => [String(k), v]))).toEqual(expected.a);
      expect(new Map([...countB].map(([k, v]) => [String(k), v]))).toEqual(expected.b);
    },
  );

  it('recovers from an exception thrown by user code', async () => {
    const job = { ...JOB, throwAtRecord: 700 };
    const dir = tempDir();
    const env = StreamEnvironment.create(baseOptions({ checkpointStorage: dir }));
    const sink = new CollectSink<string>();
    buildTwoInputJob(env, sink, job);
    const result = await env.execute('user-failure');
    expect(result.restarts).toBe(1);
    expect(sortedCopy(sink.results())).toEqual(sortedCopy(expected.outputs));
  });
});

describe('at-least-once mode', () => {
  const expected = expectedCounts(JOB);
  it.each(FAULTS.filter((_, i) => i % 3 === 0).map((fault) => [`${fault.site} at ${fault.vertex}`, fault] as const))(
    'loses nothing under %s',
    async (_name, fault) => {
      const plan = new FaultPlan([fault]);
      const { result, sink } = await runJob('at-least-once', plan);
      expect(plan.fired.length).toBe(1);
      expect(result.restarts).toBe(1);
      const got = new Set(sink.results());
      for (const out of expected.outputs) expect(got.has(out)).toBe(true);
    },
  );
});
