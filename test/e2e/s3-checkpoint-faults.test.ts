/**
 * A checkpoint whose uploads to S3 keep failing (503 SlowDown through a fault-injecting proxy in
 * front of s3rver) fails when its timeout passes, counts as a failed checkpoint the job tolerates,
 * and leaves no `_metadata`; once the store answers again the next checkpoint completes, and the
 * job ends with its file output exactly once, never restarted.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSink, readCommittedLines, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';
import { S3Objects } from '../../src/storage/s3/objects.ts';
import { checkpointDirsS3 } from '../../src/storage/s3/reader.ts';
import { s3Settings } from '../../src/storage/s3/settings.ts';
import { FaultyS3Proxy } from '../support/faulty-s3-proxy.ts';
import { checkpointInSteps } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob, expectedRunningCounts, tempDir } from '../support/jobs.ts';
import { type S3TestServer, startS3rver } from '../support/s3-server.ts';

let s3: S3TestServer;
let proxy: FaultyS3Proxy;
const dir = tempDir();
beforeAll(async () => {
  s3 = await startS3rver(['weir-ckf']);
  proxy = await FaultyS3Proxy.start(s3.endpoint);
  Object.assign(process.env, s3.env, { AWS_ENDPOINT_URL_S3: proxy.endpoint });
});
afterAll(async () => {
  await proxy.stop();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('S3 faults during a running job', () => {
  it('a checkpoint whose uploads fail past its timeout fails, is tolerated, leaves no _metadata; the next one completes', async () => {
    const count = 20_000;
    const keys = 400;
    const out = join(dir, 'out');
    const env = StreamEnvironment.create({
      parallelism: 2,
      checkpointStorage: 's3://weir-ckf/chk',
      checkpointing: { timeoutMs: 1_500, tolerableFailures: 2 },
      restartStrategy: { type: 'none' },
      jobId: 'flaky-store',
    });
    const gate = new SourceGate();
    buildKeyedCountJob(env, new FileSink({ directory: out }), { count, keys, gate });
    const events: JobEvent[] = [];
    const client = await env.executeAsync('flaky-store', { onEvent: (e) => events.push(e) });
    const [first] = await checkpointInSteps(client, gate, { count: 1, step: 2_000, subtasks: 2 });

    proxy.inject({ method: 'PUT', pathContains: '/chk/flaky-store/chk-', fault: 'slowdown-503', times: Infinity });
    const failed = await client.triggerCheckpoint().then(
      () => null,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(Error);
    proxy.heal();
    const failures = events.filter((e) => e.type === 'checkpoint-failed');
    expect(failures).toHaveLength(1);
    const failedId = failures[0]!.type === 'checkpoint-failed' ? failures[0]!.stats.checkpointId : -1;
    expect(proxy.seen.filter((r) => r.fault === 'slowdown-503').length).toBeGreaterThan(1);

    const [after] = await checkpointInSteps(client, gate, { count: 1, step: 2_000, subtasks: 2 });
    expect(after!.checkpointId).toBeGreaterThan(failedId);
    gate.open();
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(events.some((e) => e.type === 'restarting')).toBe(false);
    expect(readCommittedLines(out).sort()).toEqual(expectedRunningCounts(count, keys));
    // Nothing of the failed checkpoint could be taken for complete.
    const objects = new S3Objects(s3Settings());
    const dirs = await checkpointDirsS3(objects, 's3://weir-ckf/chk/flaky-store');
    expect(dirs.filter((d) => d.checkpointId === failedId && d.hasMetadata)).toEqual([]);
    expect(first!.checkpointId).toBeLessThan(failedId);
  });
});
