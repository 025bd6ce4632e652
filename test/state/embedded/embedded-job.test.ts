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
import { readCheckpointMetadataAt } from '../../../src/storage/fs-storage.ts';
import { FaultPlan } from '../../support/fault-plan.ts';
import { keyedCount, tempDir } from '../../support/jobs.ts';

type Backend = Pick<StreamEnvironmentOptions, 'stateBackend' | 'incremental' | 'embeddedState'>;

const HEAP: Backend = { stateBackend: 'heap' };
const EMBEDDED_FULL: Backend = { stateBackend: 'embedded', incremental: false, embeddedState: { cacheEntriesMax: 50 } };
const EMBEDDED_INCREMENTAL: Backend = { stateBackend: 'embedded', embeddedState: { cacheEntriesMax: 50, incrementsShareMax: 2 } };

async function run(backend: Backend, dir: string, faults?: FaultPlan) {
  const env = StreamEnvironment.create({
    ...backend,
    parallelism: 2,
    checkpointStorage: dir,
    jobId: 'counts',
    checkpointing: { intervalMs: 10, retained: 2, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
  });
  const sink = new CollectSink<string>();
  env
    .generate({ count: 20_000, ratePerSec: 100_000 }, (i) => `k${(i * 7919) % 700}`)
    .uid('keys')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .name('count')
    .sinkTo(sink);
  const result = await env.execute('counts', { faults });
  return { result, output: sink.results().sort() };
}

describe('the embedded backend in a job', () => {
  it('gives the heap backend\'s output, with full and incremental checkpoints, through a failure', async () => {
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
    const { result } = await run(EMBEDDED_INCREMENTAL, dir);
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
    const env = StreamEnvironment.create({ ...EMBEDDED_INCREMENTAL, parallelism: 2, checkpointStorage: dir, jobId: 'gone', checkpointing: { intervalMs: 5 } });
    env
      .generate({ count: 10_000, ratePerSec: 100_000 }, (i) => `k${i % 300}`)
      .uid('keys')
      .keyBy((k) => k)
      .process(keyedCount)
      .uid('count')
      .sinkTo(new CollectSink<string>());
    const result = await env.execute('gone');
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(1);
    expect(existsSync(join(dir, 'gone'))).toBe(false);
  });
});
