import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, ConfigError, StreamEnvironment } from '../../src/index.ts';
import { keyedCount, tempDir } from '../support/jobs.ts';

function job(dir: string, jobId: string, count: number) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: dir,
    jobId,
    checkpointing: { intervalMs: 10, retained: 1, retention: 'retain-on-cancel' },
  });
  env
    .generate({ count, ratePerSec: 20_000 }, (i) => `k${i % 50}`)
    .uid('keys')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .sinkTo(new CollectSink());
  return env;
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
    const result = await job(dir, 'second', 4_000).execute('second', { restoreFrom: from });
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(2);
    expect(existsSync(join(from, '_metadata'))).toBe(true);
  });

  it('claim: the restored checkpoint joins the retained ones and retention deletes it', async () => {
    const dir = tempDir();
    const from = await firstRun(dir);
    const result = await job(dir, 'third', 4_000).execute('third', { restoreFrom: from, claim: true });
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThan(2);
    expect(existsSync(from)).toBe(false);
  });

  it('a savepoint cannot be claimed', async () => {
    const dir = tempDir();
    const env = job(dir, 'sp', 50_000);
    const client = await env.executeAsync('sp');
    while ((client.metrics().lastCheckpoint?.checkpointId ?? 0) < 1) await new Promise((r) => setTimeout(r, 5));
    const savepoint = await client.stopWithSavepoint(join(dir, 'savepoints'));
    const error = await job(dir, 'claimer', 10).execute('claimer', { restoreFrom: savepoint, claim: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('cannot be claimed');
  });
});
