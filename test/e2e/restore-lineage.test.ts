/**
 * Each resume writes a new job directory, so `restoreFrom: <job dir>` whose own
 * checkpoints do not verify (or whose run completed none) follows the directory's lineage — the
 * checkpoint its run was restored from — under the same sink-aware rule, and names what it chose.
 */
import { existsSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSink, readCommittedLines, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';
import { checkpointInSteps, whenRunning } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob, expectedRunningCounts, tempDir as newTempDir, until } from '../support/jobs.ts';

const KEYS = 300;
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempDir(): string {
  const root = newTempDir('weir-lineage-');
  roots.push(root);
  return root;
}
const COUNT = 30_000;

/** `gate` holds the input (default: not at all), so the job still runs while the test acts. */
function job(root: string, jobId: string, gate = new SourceGate(Infinity)) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: join(root, 'chk'),
    checkpointing: { retained: 1, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'none' },
    jobId,
  });
  const sink = new FileSink({ directory: join(root, 'out') });
  buildKeyedCountJob(env, sink, { count: COUNT, keys: KEYS, gate });
  return { env, sink, gate };
}

/** Runs `jobId` (from `restoreFrom` when given) through `checkpoints` committed checkpoints, then cancels it. */
async function runThenCancel(root: string, jobId: string, checkpoints: number, restoreFrom?: string) {
  const j = job(root, jobId, new SourceGate());
  const client = await j.env.executeAsync(jobId, restoreFrom === undefined ? {} : { restoreFrom });
  let newest: { checkpointId: number; location: string } | null = null;
  if (checkpoints > 0) {
    newest = (await checkpointInSteps(client, j.gate, { count: checkpoints, step: 2_000, subtasks: 2 })).at(-1)!;
    const id = newest.checkpointId;
    await until('the sink to commit the newest checkpoint', async () => (await j.sink.newestCommitted()) === id);
  } else {
    await whenRunning(client);
  }
  await client.cancel();
  return newest;
}

/** A first run with one checkpoint, then a second resumed from its job dir that takes `ownCheckpoints`, then is cancelled. */
async function originThenResumed(ownCheckpoints: number) {
  const root = tempDir();
  const secondDir = join(root, 'chk', 'second');
  const origin = (await runThenCancel(root, 'first', 1))!;
  const own = await runThenCancel(root, 'second', ownCheckpoints, join(root, 'chk', 'first'));
  return { root, secondDir, origin, own };
}

/** Runs job 'third' from the second run's job dir to its end, with its events. */
async function third(root: string, secondDir: string) {
  const events: JobEvent[] = [];
  const result = await job(root, 'third').env.execute('third', { restoreFrom: secondDir, onEvent: (e) => events.push(e) });
  const running = events.find((e) => e.type === 'running');
  return { result, events, restoredFrom: running?.type === 'running' ? running.restoredFrom : undefined };
}

function messages(events: readonly JobEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
}

describe('restore lineage', () => {
  it('a job dir whose only checkpoint is corrupt resumes from the checkpoint its run was restored from, rolling the sink back', async () => {
    const { root, secondDir, origin, own: ownOrNull } = await originThenResumed(1);
    const own = ownOrNull!;
    expect(own.location).toBe(join(secondDir, `chk-${own.checkpointId}`));
    truncateSync(join(own.location, '_metadata'), 20);

    const { result, events, restoredFrom } = await third(root, secondDir);
    expect(result.status).toBe('FINISHED');
    expect(existsSync(join(secondDir, '_restored_from'))).toBe(true);
    expect(restoredFrom).toBe(origin.checkpointId);
    expect(messages(events)).toContain(
      `restoring from checkpoint ${origin.checkpointId} at ${origin.location}: job directory ${secondDir} was restored from it (checkpoint ${own.checkpointId} did not verify)`,
    );
    // The sink committed the output of the corrupt checkpoint: it is rolled back, not committed twice.
    const rolled = events.find((e) => e.type === 'sink-rolled-back');
    expect(rolled?.type === 'sink-rolled-back' && rolled.after).toBe(origin.checkpointId);
    expect(readCommittedLines(join(root, 'out')).sort()).toEqual(expectedRunningCounts(COUNT, KEYS));
  });

  it('a job dir whose resumed run completed no checkpoint resumes from what that run was restored from', async () => {
    const { root, secondDir, origin } = await originThenResumed(0);
    const { result, events, restoredFrom } = await third(root, secondDir);
    expect(result.status).toBe('FINISHED');
    expect(restoredFrom).toBe(origin.checkpointId);
    expect(messages(events)).toContain(
      `restoring from checkpoint ${origin.checkpointId} at ${origin.location}: job directory ${secondDir} was restored from it (it completed no checkpoint of its own)`,
    );
    expect(readCommittedLines(join(root, 'out')).sort()).toEqual(expectedRunningCounts(COUNT, KEYS));
  });

  it('when the lineage does not verify either, the error names every checkpoint it tried', async () => {
    const { root, secondDir, origin, own: ownOrNull } = await originThenResumed(1);
    const own = ownOrNull!;
    truncateSync(join(own.location, '_metadata'), 20);
    truncateSync(join(origin.location, '_metadata'), 20);
    const error = await third(root, secondDir).catch((e: unknown) => e);
    expect((error as Error).message).toContain(`checkpoint ${own.checkpointId}: ${join(own.location, '_metadata')}`);
    expect((error as Error).message).toContain(`checkpoint ${origin.checkpointId}: ${join(origin.location, '_metadata')}`);
  });
});
