/**
 * Jobs checkpointing to S3 (a real s3rver on loopback, behind a pass-through proxy that records
 * the requests) do what they do on a directory: unaligned checkpoints with entropy-injected keys
 * whose in-flight data is written as objects and read back on restore, restore from the job's prefix skipping a corrupt newest
 * `_metadata` with the file sink rolled back, incremental embedded checkpoints (shared objects), and
 * savepoints that are relocatable (copied to another prefix, resumed from the copy at another
 * parallelism and backend).
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CollectSink, FileSink, readCommittedLines, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent, StreamEnvironmentOptions } from '../../src/index.ts';
import { metadataPath } from '../../src/storage/paths.ts';
import { S3Objects } from '../../src/storage/s3/objects.ts';
import { readStateS3, s3SnapshotReader } from '../../src/storage/s3/reader.ts';
import { s3Settings } from '../../src/storage/s3/settings.ts';
import { checkpointInSteps, whenRunning } from '../support/clients.ts';
import { FaultyS3Proxy } from '../support/faulty-s3-proxy.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob, expectedRunningCounts, tempDir, until } from '../support/jobs.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { type S3TestServer, startS3rver } from '../support/s3-server.ts';

let s3: S3TestServer;
let proxy: FaultyS3Proxy;
let objects: S3Objects;
const dirs: string[] = [];
beforeAll(async () => {
  s3 = await startS3rver(['weir-e2e']);
  proxy = await FaultyS3Proxy.start(s3.endpoint);
  Object.assign(process.env, s3.env, { AWS_ENDPOINT_URL_S3: proxy.endpoint });
  objects = new S3Objects(s3Settings());
});
afterAll(async () => {
  await proxy.stop();
  await s3.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function root(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

const KEYS = 300;

function fallbackJob(out: string, jobId: string, count: number, gate = new SourceGate(Infinity)) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    stateBackend: 'heap',
    checkpointStorage: 's3://weir-e2e/_entropy_/chk',
    checkpointing: { retained: 3, retention: 'retain-on-cancel', unaligned: true },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
    // Small buffers and a count slow enough (20 µs a record) that its input queues are full when a
    // barrier arrives: the barrier overtakes them, and they are written as channel state objects.
    bufferRecords: 256,
    channelCapacity: 8,
    jobId,
  });
  const sink = new FileSink({ directory: out });
  buildKeyedCountJob(env, sink, { count, keys: KEYS, gate, countMicros: 20 });
  return { env, sink, gate };
}

describe('jobs with S3 checkpoint storage', () => {
  it('restoreFrom an S3 job prefix skips a corrupt newest _metadata, rolls the file sink back, and stays exactly-once', async () => {
    const out = join(root(), 'out');
    const count = 30_000;
    const first = fallbackJob(out, 'first', count, new SourceGate());
    const client = await first.env.executeAsync('first');
    const [older, newest] = await checkpointInSteps(client, first.gate, { count: 2, step: 2_000, subtasks: 2 });
    expect(newest!.location).toBe(`s3://weir-e2e/chk/first/chk-${newest!.checkpointId}`);
    await until('the sink to commit the newest checkpoint', async () => (await first.sink.newestCommitted()) === newest!.checkpointId);
    await client.cancel();
    // Exclusive state objects sit below random prefixes; `_metadata` keeps its stable key.
    const meta = await readCheckpointMetadataAt(older!.location, s3SnapshotReader(objects));
    expect(meta.checkpointId).toBe(older!.checkpointId);
    const keys = (await objects.list('s3://weir-e2e')).objects.map((o) => o.url);
    expect(keys.some((k) => /^s3:\/\/weir-e2e\/[0-9a-f]{4}\/chk\/first\/chk-\d+\//.test(k))).toBe(true);
    expect(keys.some((k) => k.includes('_entropy_'))).toBe(false);
    // The checkpoint restored from holds in-flight data, as objects of its own in the bucket.
    const inFlight = meta.operators.flatMap((o) => o.subtasks.flatMap((st) => st.channels));
    const channelObjects = inFlight.flatMap((c) => (c.stream.type === 'file' ? [c.stream.path] : []));
    expect(channelObjects.length).toBeGreaterThan(0);
    expect(meta.summary?.channelStateBytes).toBeGreaterThan(0);
    for (const url of channelObjects) expect(await objects.head(url), url).not.toBeNull();
    const file = metadataPath(newest!.location);
    await objects.put(file, Buffer.from((await objects.get(file, 'test')).bytes.subarray(0, 20)));

    const events: JobEvent[] = [];
    const fromRequest = proxy.seen.length;
    const second = fallbackJob(out, 'second', count);
    const result = await second.env.execute('second', { restoreFrom: 's3://weir-e2e/chk/first', onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    const fallback = events.find((e) => e.type === 'restore-fallback');
    expect(fallback?.type === 'restore-fallback' && fallback.reason).toContain(file);
    const running = events.find((e) => e.type === 'running');
    expect(running?.type === 'running' && running.restoredFrom).toBe(older!.checkpointId);
    expect(events.some((e) => e.type === 'sink-rolled-back')).toBe(true);
    // The restore read every channel state object back (and the output shows it replayed them).
    const read = new Set(proxy.seen.slice(fromRequest).flatMap((r) => (r.method === 'GET' ? [`s3:/${r.url.split('?')[0]}`] : [])));
    expect(channelObjects.filter((url) => !read.has(url))).toEqual([]);
    expect(readCommittedLines(out).sort()).toEqual(expectedRunningCounts(count, KEYS));
  });

  it('a savepoint in S3 copied to another prefix resumes from the copy at another parallelism and backend, exactly-once', async () => {
    const N = 9_000;
    const external = new CollectSink<string>();
    const build = (options: StreamEnvironmentOptions, gate: SourceGate) => {
      const env = StreamEnvironment.create({
        checkpointStorage: 's3://weir-e2e/sp-run/chk',
        checkpointing: { retention: 'retain-on-cancel' },
        restartStrategy: { type: 'none' },
        ...options,
      });
      buildKeyedCountJob(env, external, { count: N, keys: KEYS, gate });
      return env;
    };
    const client = await build({ parallelism: 3, stateBackend: 'embedded' }, new SourceGate(600)).executeAsync('relocate');
    await whenRunning(client);
    await client.triggerCheckpoint();
    // The embedded backend's checkpoint is incremental: its files are shared objects of the job.
    const run = await objects.list('s3://weir-e2e/sp-run/chk');
    expect(run.objects.some((o) => /\/relocate-[^/]+\/shared\/ckpt-\d+-/.test(o.url))).toBe(true);
    const savepoint = await client.stopWithSavepoint('s3://weir-e2e/savepoints');
    expect(savepoint).toMatch(/^s3:\/\/weir-e2e\/savepoints\/savepoint-\d+-[A-Za-z0-9]+$/);
    expect((await client.result).status).toBe('FINISHED');

    // Relocate: copy every object below the savepoint's prefix elsewhere, then delete the original.
    const moved = `s3://weir-e2e/moved/${savepoint.split('/').pop()}`;
    const { objects: listed } = await objects.list(savepoint);
    expect(listed.length).toBeGreaterThan(1);
    for (const o of listed) await objects.put(`${moved}${o.url.slice(savepoint.length)}`, Buffer.from((await objects.get(o.url, 'test')).bytes));
    await objects.deleteBelow(savepoint);

    const last = await build({ parallelism: 2, stateBackend: 'heap' }, new SourceGate(Infinity)).execute('relocate', { restoreFrom: moved });
    expect(last.status).toBe('FINISHED');
    expect(external.results().sort()).toEqual(expectedRunningCounts(N, KEYS));
    const meta = await readCheckpointMetadataAt(last.lastCheckpointLocation!, s3SnapshotReader(objects));
    const state = await keyedStateAt(meta, 'count', 'n', (h) => readStateS3(objects, h));
    expect(state.size).toBe(KEYS);
    for (let k = 0; k < KEYS; k++) expect(state.get(`key-${k}`)).toBe(N / KEYS);
  });

  it('a job on a local directory resumes from a savepoint in S3, and a job in S3 from one on disk: savepoints move between storages', async () => {
    const N = 6_000;
    const external = new CollectSink<string>();
    const build = (checkpointStorage: string, gate: SourceGate) => {
      const env = StreamEnvironment.create({ parallelism: 2, checkpointStorage, restartStrategy: { type: 'none' } });
      buildKeyedCountJob(env, external, { count: N, keys: KEYS, gate });
      return env;
    };
    const local = root();
    const first = await build('s3://weir-e2e/migrate/chk', new SourceGate(500)).executeAsync('migrate');
    await whenRunning(first);
    const inS3 = await first.stopWithSavepoint('s3://weir-e2e/migrate/savepoints');
    expect((await first.result).status).toBe('FINISHED');
    // State objects of their own beside `_metadata`: the next run reads them from S3.
    expect((await objects.list(inS3)).objects.length).toBeGreaterThan(1);

    const second = await build(join(local, 'chk'), new SourceGate(1_500)).executeAsync('migrate', { restoreFrom: inS3 });
    await whenRunning(second);
    const onDisk = await second.stopWithSavepoint(join(local, 'savepoints'));
    expect(onDisk.startsWith(local)).toBe(true);
    expect(readdirSync(onDisk).length).toBeGreaterThan(1);
    expect((await second.result).status).toBe('FINISHED');

    const last = await build('s3://weir-e2e/migrate/chk', new SourceGate(Infinity)).execute('migrate', { restoreFrom: onDisk });
    expect(last.status).toBe('FINISHED');
    expect(external.results().sort()).toEqual(expectedRunningCounts(N, KEYS));
  });
});
