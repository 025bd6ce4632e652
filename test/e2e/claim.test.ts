import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, ConfigError, StreamEnvironment } from '../../src/index.ts';
import { checkpointInSteps, whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { keyedCount, tempDir } from '../support/jobs.ts';

/** Checkpoints on demand only (and the final one); the gate holds the input until the test lets it go. */
function job(dir: string, jobId: string, count: number, gate = new SourceGate(Infinity)) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: dir,
    jobId,
    checkpointing: { retained: 1, retention: 'retain-on-cancel' },
  });
  heldGenerate(env, { count }, (i) => `k${i % 50}`, { gate })
    .uid('keys')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .sinkTo(new CollectSink());
  return env;
}

/** Two checkpoints on demand while the input grows, then the rest of the input and the final checkpoint. */
async function secondRun(dir: string, jobId: string, from: string, claim: boolean) {
  const gate = new SourceGate();
  const client = await job(dir, jobId, 4_000, gate).executeAsync(jobId, { restoreFrom: from, claim });
  await checkpointInSteps(client, gate, { count: 2, step: 300, subtasks: 2 });
  gate.open();
  return client.result;
}

async function firstRun(dir: string): Promise<string> {
  const result = await job(dir, 'first', 2_000).execute('first');
  expect(result.lastCheckpointLocation).not.toBeNull();
  return result.lastCheckpointLocation!;
}

describe('ownership of the checkpoint a job restores from', () => {
  it('no-claim (default): the restored checkpoint is never deleted', async () => {
    const dir = tempDir();
    const from = await firstRun(dir);
    const result = await secondRun(dir, 'second', from, false);
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(2);
    expect(existsSync(join(from, '_metadata'))).toBe(true);
  });

  it('claim: the restored checkpoint joins the retained ones and retention deletes it', async () => {
    const dir = tempDir();
    const from = await firstRun(dir);
    const result = await secondRun(dir, 'third', from, true);
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(2);
    expect(existsSync(from)).toBe(false);
  });

  it('a savepoint cannot be claimed', async () => {
    const dir = tempDir();
    // Held at 1,000 records a subtask: the job is still running when the stop arrives.
    const env = job(dir, 'sp', 50_000, new SourceGate(1_000));
    const client = await env.executeAsync('sp');
    await whenRunning(client);
    const savepoint = await client.stopWithSavepoint(join(dir, 'savepoints'));
    const error = await job(dir, 'claimer', 10)
      .execute('claimer', { restoreFrom: savepoint, claim: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('cannot be claimed');
  });
});
