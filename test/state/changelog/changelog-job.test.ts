/**
 * The changelog backend in real jobs on a checkpoint directory: the heap backend's output through
 * failures (over heap and over embedded), checkpoints that are materialization + log range, and a
 * job switched to and from the changelog backend through a savepoint.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../../src/index.ts';
import type { StreamEnvironmentOptions } from '../../../src/index.ts';
import { filePathsOf, streamHandlesOf } from '../../../src/checkpoint/metadata/walk.ts';
import { readCheckpointMetadataAt } from '../../../src/checkpoint/restore/locate.ts';
import { listCheckpointsIn } from '../../../src/checkpoint/restore/snapshot-listing.ts';
import { formatListings } from '../../../src/cli/checkpoints-command.ts';
import { formatReport, inspectSnapshot } from '../../../src/cli/savepoint-inspect.ts';
import type { ChangelogStateHandle } from '../../../src/state/handles/changelog.ts';
import { FaultPlan } from '../../support/fault-plan.ts';
import { SourceGate } from '../../support/held-source.ts';
import { backendCountsJob, tempDir } from '../../support/jobs.ts';

type Backend = StreamEnvironmentOptions['stateBackend'];

async function run(
  stateBackend: Backend,
  dir: string,
  faults?: FaultPlan,
  stage: { gate?: SourceGate; parallelism?: number; restoreFrom?: string; sink?: CollectSink<string> } = {},
) {
  const env = StreamEnvironment.create({
    stateBackend,
    parallelism: stage.parallelism ?? 2,
    checkpointStorage: dir,
    jobId: 'counts',
    checkpointing: { intervalMs: 10, retained: 2, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 5 },
  });
  const sink = stage.sink ?? new CollectSink<string>();
  backendCountsJob(env, sink, stage.gate ? { gate: stage.gate } : { recordsPerCheckpoint: 1000 });
  const client = await env.executeAsync('counts', { faults, ...(stage.restoreFrom ? { restoreFrom: stage.restoreFrom } : {}) });
  if (stage.gate) {
    await stage.gate.reached(stage.parallelism ?? 2);
    const savepoint = await client.stopWithSavepoint(join(dir, 'savepoints'));
    await client.result;
    return { result: null, savepoint, output: sink.results() };
  }
  const result = await client.result;
  return { result, savepoint: null, output: sink.results().sort() };
}

/** Runs with `from` until a savepoint, then on with `to` at parallelism 3 from it: the output of one clean run. */
async function switchThroughSavepoint(from: Backend, to: Backend, expected: readonly string[]): Promise<string> {
  const dir = tempDir();
  const sink = new CollectSink<string>();
  const stopped = await run(from, dir, undefined, { gate: new SourceGate(3_000), sink });
  const savepoint = stopped.savepoint!;
  expect(stopped.output.length).toBeGreaterThan(0);
  expect(stopped.output.length).toBeLessThan(expected.length);
  const report = await inspectSnapshot(savepoint);
  expect(report.handleKinds).toEqual(['key-groups']); // canonical, whatever the backend
  const resumed = await run(to, dir, undefined, { parallelism: 3, restoreFrom: savepoint, sink });
  expect(resumed.output).toEqual(expected);
  return savepoint;
}

describe('the changelog backend in a job', () => {
  it("gives the heap backend's output through a failure, over heap and over embedded", async () => {
    const clean = await run('heap', tempDir());
    expect(clean.output.length).toBe(20_000);
    const backends: Backend[] = [
      { type: 'changelog', materializationIntervalMs: 20 },
      { type: 'changelog', over: { type: 'embedded', cacheEntriesMax: 50 }, materializationIntervalMs: 20, uploadBytesThreshold: 4096 },
    ];
    for (const backend of backends) {
      const plan = new FaultPlan([{ site: 'process', vertex: 'count', subtask: 1, nth: 30 }]);
      const dir = tempDir();
      const { result, output } = await run(backend, dir, plan);
      expect(plan.fired.length).toBe(1);
      expect(result!.restarts).toBe(1);
      expect(output).toEqual(clean.output);
      const jobDir = join(dir, 'counts');
      const newest = readdirSync(jobDir)
        .filter((n) => n.startsWith('chk-'))
        .sort((a, b) => Number(b.slice(4)) - Number(a.slice(4)))[0]!;
      const meta = await readCheckpointMetadataAt(join(jobDir, newest));
      const keyed = meta.operators.flatMap((o) => o.subtasks.flatMap((s) => s.keyed));
      expect(keyed.length).toBe(2);
      expect(keyed.every((h) => h.type === 'changelog')).toBe(true);
      expect(keyed.some((h) => (h as ChangelogStateHandle).materialization.handles.length > 0)).toBe(true);
    }
  });

  it('switches to and from the changelog backend through a savepoint (rescaling 2 -> 3 on the way)', async () => {
    const clean = await run('heap', tempDir());
    await switchThroughSavepoint('heap', { type: 'changelog', over: 'embedded', materializationIntervalMs: 20 }, clean.output);
    await switchThroughSavepoint({ type: 'changelog', materializationIntervalMs: 20 }, 'embedded', clean.output);
  });

  it('releases truncated log segments and old materializations: shared/ holds exactly what retained checkpoints refer to', async () => {
    const dir = tempDir();
    const backend: Backend = { type: 'changelog', over: { type: 'embedded', cacheEntriesMax: 50 }, materializationIntervalMs: 15, uploadBytesThreshold: 2048 };
    const { result } = await run(backend, dir);
    const completed = result!.checkpoints.filter((c) => c.status === 'COMPLETED');
    expect(completed.length).toBeGreaterThan(4);
    const jobDir = join(dir, 'counts');
    const referenced = new Set<string>();
    const materializations = new Set<number>();
    const streamKinds = new Set<string>();
    for (const chk of readdirSync(jobDir).filter((n) => n.startsWith('chk-'))) {
      const meta = await readCheckpointMetadataAt(join(jobDir, chk));
      for (const p of filePathsOf(meta)) referenced.add(p);
      for (const h of streamHandlesOf(meta)) streamKinds.add(h.type);
      for (const h of meta.operators.flatMap((o) => o.subtasks.flatMap((s) => s.keyed))) materializations.add((h as ChangelogStateHandle).materialization.id);
    }
    expect([...materializations].some((id) => id > 0)).toBe(true);
    // The subtasks' log batches share files: segments name byte ranges of them.
    expect(streamKinds.has('range')).toBe(true);
    const shared = readdirSync(join(jobDir, 'shared')).map((n) => join(jobDir, 'shared', n));
    expect(shared.some((f) => f.includes('changelog-'))).toBe(true);
    for (const f of shared) expect(referenced.has(f), `${f} is referenced by a retained checkpoint`).toBe(true);
    for (const f of referenced) expect(existsSync(f), `${f} exists`).toBe(true);
    // `weir checkpoints` and `weir savepoint inspect` show the handle kind.
    const listed = await listCheckpointsIn(dir);
    expect(listed.length).toBeGreaterThan(0);
    for (const l of listed) expect(l.handleKinds).toEqual(['changelog']);
    expect(formatListings(dir, listed)).toMatch(/HANDLES[\s\S]*changelog\s+complete/);
    const report = await inspectSnapshot(listed[0]!.location);
    expect(report.handleKinds).toEqual(['changelog']);
    expect(formatReport(report)).toMatch(/keyed handles {3}changelog/);
  });
});
