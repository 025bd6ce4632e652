/**
 * The embedded backend in real jobs on a checkpoint directory: the same output as the heap backend
 * through a failure, incremental checkpoints that persist less than the state, and a shared
 * directory that holds exactly what the retained checkpoint needs.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../../src/index.ts';
import type { StreamEnvironmentOptions } from '../../../src/index.ts';
import { filePathsOf } from '../../../src/checkpoint/metadata/walk.ts';
import { readCheckpointMetadataAt } from '../../../src/checkpoint/restore/locate.ts';
import { checkpointInSteps } from '../../support/clients.ts';
import { FaultPlan } from '../../support/fault-plan.ts';
import { heldGenerate, SourceGate } from '../../support/held-source.ts';
import { backendCountsJob, keyedCount, tempDir } from '../../support/jobs.ts';

type Backend = Pick<StreamEnvironmentOptions, 'stateBackend' | 'incremental' | 'embeddedState'>;

const HEAP: Backend = { stateBackend: 'heap' };
const EMBEDDED_FULL: Backend = { stateBackend: 'embedded', incremental: false, embeddedState: { cacheEntriesMax: 50 } };
const EMBEDDED_INCREMENTAL: Backend = { stateBackend: 'embedded', embeddedState: { cacheEntriesMax: 50, incrementsShareMax: 2 } };

/**
 * A keyed count of 20,000 records over 700 keys at parallelism 2. With `steps`, checkpoints are
 * taken only on demand: first after `first` records per subtask, then after each `step` more.
 */
async function run(backend: Backend, dir: string, faults?: FaultPlan, steps?: { first: number; step: number; count: number }) {
  const env = StreamEnvironment.create({
    ...backend,
    parallelism: 2,
    checkpointStorage: dir,
    jobId: 'counts',
    checkpointing: { ...(steps ? {} : { intervalMs: 10 }), retained: 2, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
  });
  const sink = new CollectSink<string>();
  const gate = new SourceGate(steps ? steps.first - steps.step : Infinity);
  backendCountsJob(env, sink, { gate });
  const client = await env.executeAsync('counts', { faults });
  if (steps) {
    await checkpointInSteps(client, gate, { count: steps.count, step: steps.step, subtasks: 2 });
    gate.open();
  }
  const result = await client.result;
  return { result, output: sink.results().sort() };
}

describe('the embedded backend in a job', () => {
  it("gives the heap backend's output, with full and incremental checkpoints, through a failure", async () => {
    const clean = await run(HEAP, tempDir());
    expect(clean.output.length).toBe(20_000);
    for (const backend of [EMBEDDED_FULL, EMBEDDED_INCREMENTAL]) {
      const plan = new FaultPlan([{ site: 'process', vertex: 'count', subtask: 1, nth: 5 }]);
      const { result, output } = await run(backend, tempDir(), plan);
      expect(plan.fired.length).toBe(1);
      expect(result.restarts).toBe(1);
      expect(output).toEqual(clean.output);
    }
  });

  it('incremental checkpoints persist less than the state, and shared/ holds only what retained checkpoints refer to', async () => {
    const dir = tempDir();
    // A base with every key, then four checkpoints that change a few keys each, then the final one.
    const { result } = await run(EMBEDDED_INCREMENTAL, dir, undefined, { first: 9_000, step: 20, count: 5 });
    const completed = result.checkpoints.filter((c) => c.status === 'COMPLETED');
    expect(completed.length).toBeGreaterThan(3);
    const jobDir = join(dir, 'counts');
    const retained = readdirSync(jobDir).filter((n) => n.startsWith('chk-'));
    expect(retained.length).toBeGreaterThanOrEqual(1);
    const referenced = new Set<string>();
    let sawIncrement = false;
    for (const chk of retained) {
      const meta = await readCheckpointMetadataAt(join(jobDir, chk));
      for (const p of filePathsOf(meta)) referenced.add(p);
      if (meta.summary!.persistedBytes < meta.summary!.stateBytes) sawIncrement = true;
    }
    const shared = readdirSync(join(jobDir, 'shared')).map((n) => join(jobDir, 'shared', n));
    expect(shared.length).toBeGreaterThan(0);
    for (const f of shared) expect(referenced.has(f), `${f} is referenced by a retained checkpoint`).toBe(true);
    for (const f of referenced) expect(existsSync(f), `${f} exists`).toBe(true);
    expect(sawIncrement).toBe(true);
  });

  it('deletes its checkpoints and shared files when the job ends without retention', async () => {
    const dir = tempDir();
    const env = StreamEnvironment.create({ ...EMBEDDED_INCREMENTAL, parallelism: 2, checkpointStorage: dir, jobId: 'gone' });
    const gate = new SourceGate();
    heldGenerate(env, { count: 10_000 }, (i) => `k${i % 300}`, { gate })
      .uid('keys')
      .keyBy((k) => k)
      .process(keyedCount)
      .uid('count')
      .sinkTo(new CollectSink<string>());
    const client = await env.executeAsync('gone');
    await checkpointInSteps(client, gate, { count: 2, step: 1_000, subtasks: 2 });
    gate.open();
    const result = await client.result;
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(1);
    expect(existsSync(join(dir, 'gone'))).toBe(false);
  });
});
