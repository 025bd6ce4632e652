/**
 * The S3 storage's commit protocol against a real s3rver (which, like some S3-compatible servers,
 * ignores `If-None-Match`): `_metadata` last and create-only, a second writer excluded by the HEAD
 * before the PUT and by the run marker, incomplete checkpoints never listed complete and deleted by
 * listing (with paging), entropy injection for exclusive state objects, multipart uploads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCompletedCheckpoints } from '../../../src/checkpoint/restore/checkpoint-listing.ts';
import { commitCheckpointMetadata } from '../../../src/checkpoint/metadata/commit.ts';
import { StorageError } from '../../../src/core/errors.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import type { StreamStateHandle } from '../../../src/storage/handles.ts';
import { isInside, metadataPath } from '../../../src/storage/paths.ts';
import { S3CheckpointStorage, type S3CheckpointStorageOptions } from '../../../src/storage/s3/s3-storage.ts';
import { type S3TestServer, startS3rver } from '../../support/s3-server.ts';
import { patternBytes, sampleMetadata } from '../fixtures.ts';

let s3: S3TestServer;
let prefixes = 0;
beforeAll(async () => {
  s3 = await startS3rver(['weir-commit']);
  Object.assign(process.env, s3.env);
});
afterAll(() => s3.stop());

const JOB = jobId('job-c');
const root = () => `s3://weir-commit/t${++prefixes}`;
const open = (r: string, o: S3CheckpointStorageOptions = {}) => new S3CheckpointStorage(r, JOB, { inlineThresholdBytes: 16, ...o });

function pathOf(h: StreamStateHandle): string {
  if (h.type !== 'file') throw new Error('expected a file handle');
  return h.path;
}

async function rejection(p: Promise<unknown>): Promise<StorageError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StorageError);
  return err as StorageError;
}

describe('S3 commit protocol', () => {
  it('a second writer of the same _metadata is refused even where the server ignores If-None-Match', async () => {
    const r = root();
    const a = open(r);
    const b = open(r);
    await a.commitMetadata(checkpointId(1), patternBytes(40, 1));
    const err = await rejection(b.commitMetadata(checkpointId(1), patternBytes(40, 2)));
    expect(err.code).toBe('STORAGE_IO');
    expect(err.file).toBe(metadataPath(a.checkpointDir(checkpointId(1))));
    expect(err.message).toContain('already committed');
    // The first writer's bytes are still the ones there.
    expect(Array.from(await a.readMetadataBytes(a.checkpointDir(checkpointId(1))))).toEqual(Array.from(patternBytes(40, 1)));
  });

  it('a run that another run took over commits no more checkpoints (run marker)', async () => {
    const r = root();
    const first = open(r);
    await first.initialize();
    await first.commitMetadata(checkpointId(1), patternBytes(40));
    const second = open(r);
    expect((await second.initialize()).highestCheckpointId).toBe(1);
    const err = await rejection(first.commitMetadata(checkpointId(2), patternBytes(40)));
    expect(err.message).toContain('another run took over');
    expect(err.file).toBe(`${second.jobDir}/_run`);
    await second.commitMetadata(checkpointId(2), patternBytes(40));
    expect((await second.listCheckpointDirs()).map((c) => [c.checkpointId, c.hasMetadata])).toEqual([
      [1, true],
      [2, true],
    ]);
  });

  it('a checkpoint without _metadata is never listed complete, and the next attempt deletes its objects', async () => {
    const r = root();
    const s = open(r);
    await s.initialize();
    const h = await s.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(500));
    const done = await s.streamFactory(checkpointId(2)).write('exclusive', 'k', patternBytes(500));
    await commitCheckpointMetadata(s, sampleMetadata({ id: 2, job: 'job-c', keyed: [done] }));
    expect((await listCompletedCheckpoints(s)).map((c) => c.checkpointId)).toEqual([2]);
    const again = open(r);
    expect((await again.initialize()).highestCheckpointId).toBe(2);
    expect((await rejection(again.readState(h))).code).toBe('MISSING_FILE');
    expect((await again.listCheckpointDirs()).map((c) => c.checkpointId)).toEqual([2]);
    expect((await again.readState(done)).byteLength).toBe(500);
  });

  it('lists and deletes page by page', async () => {
    const r = root();
    const s = open(r, { listPageKeysMax: 3 });
    await s.initialize();
    const streams = s.streamFactory(checkpointId(5));
    const hs = await Promise.all(Array.from({ length: 8 }, (_, i) => streams.write('exclusive', `k${i}`, patternBytes(100, i))));
    const shared = await Promise.all(Array.from({ length: 7 }, (_, i) => s.streamFactory(checkpointId(5)).write('shared', `s${i}`, patternBytes(100, i))));
    expect((await s.listSharedFiles()).sort()).toEqual(shared.map(pathOf).sort());
    expect(await s.dirSizeBytes(s.checkpointDir(checkpointId(5)))).toBe(8 * 118);
    await s.discardCheckpoint(checkpointId(5));
    for (const h of hs) expect((await rejection(s.readState(h))).code).toBe('MISSING_FILE');
    expect((await s.objects.list(s.checkpointDir(checkpointId(5)))).objects).toEqual([]);
  });

  it('a write that finishes after its checkpoint was discarded leaves no object behind', async () => {
    const s = open(root());
    await s.initialize();
    const writing = s.streamFactory(checkpointId(3)).write('exclusive', 'late', patternBytes(2000));
    await s.discardCheckpoint(checkpointId(3));
    expect((await rejection(writing)).message).toContain('discarded');
    expect((await s.objects.list(s.checkpointDir(checkpointId(3)))).objects).toEqual([]);
  });

  it('uploads a large state object in parts and reads it back whole', async () => {
    const s = open(root(), { multipartThresholdBytes: 5 * 1024 * 1024, partSizeBytes: 5 * 1024 * 1024 });
    const parts = [patternBytes(3 * 1024 * 1024, 1), patternBytes(4 * 1024 * 1024, 2), patternBytes(1000, 3)];
    const streams = s.streamFactory(checkpointId(1));
    const h = await streams.writeParts!('exclusive', 'big', parts);
    expect(h).toMatchObject({ type: 'file', size: 7 * 1024 * 1024 + 1000 });
    const back = await s.readState(h);
    expect(back.byteLength).toBe(7 * 1024 * 1024 + 1000);
    expect(Array.from(back.subarray(3 * 1024 * 1024, 3 * 1024 * 1024 + 8))).toEqual(Array.from(parts[1]!.subarray(0, 8)));
    await s.checkStateFile(h as StreamStateHandle & { type: 'file' });
  });
});

describe('S3 entropy injection', () => {
  it('exclusive objects go below random prefixes, _metadata and shared objects keep stable keys, and discard finds them all', async () => {
    const base = `s3://weir-commit/e${++prefixes}`;
    const s = open(`${base}/_entropy_/checkpoints`);
    expect(s.jobDir).toBe(`${base}/checkpoints/job-c`);
    await s.initialize();
    const streams = s.streamFactory(checkpointId(1));
    const own = await Promise.all([1, 2, 3, 4].map((i) => streams.write('exclusive', 'k', patternBytes(300, i))));
    const shared = await streams.write('shared', 's', patternBytes(300));
    for (const h of own) {
      expect(pathOf(h)).toMatch(new RegExp(`^${base}/[0-9a-f]{4}/checkpoints/job-c/chk-1/k-`));
      expect(pathOf(h)).not.toContain('_entropy_');
    }
    expect(isInside(s.sharedDir, pathOf(shared))).toBe(true);
    const location = await commitCheckpointMetadata(s, sampleMetadata({ id: 1, job: 'job-c', keyed: [...own, shared] }));
    expect(location).toBe(`${base}/checkpoints/job-c/chk-1`);
    expect((await listCompletedCheckpoints(s)).map((c) => c.checkpointId)).toEqual([1]);
    for (const [i, h] of own.entries()) expect(Array.from(await s.readState(h))).toEqual(Array.from(patternBytes(300, i + 1)));

    // An incomplete checkpoint's injected objects are found by listing when the next attempt starts.
    const orphan = await s.streamFactory(checkpointId(2)).write('exclusive', 'k', patternBytes(300));
    const again = open(`${base}/_entropy_/checkpoints`);
    expect((await again.initialize()).highestCheckpointId).toBe(2);
    expect((await rejection(again.readState(orphan))).code).toBe('MISSING_FILE');
    for (const h of own) expect((await again.readState(h)).byteLength).toBe(300);

    await again.discardCheckpoint(checkpointId(1));
    for (const h of own) expect((await rejection(again.readState(h))).code).toBe('MISSING_FILE');
    expect((await again.readState(shared)).byteLength).toBe(300);
  });

  it('a savepoint keeps stable keys: every object below its own prefix', async () => {
    const base = `s3://weir-commit/e${++prefixes}`;
    const s = open(`${base}/_entropy_/checkpoints`);
    const target = s.createSavepointTarget(`${base}/savepoints`, checkpointId(4), 'abc');
    expect(target.location).toBe(`${base}/savepoints/savepoint-4-abc`);
    const h = await target.streamFactory(checkpointId(4)).write('exclusive', 'k', patternBytes(300));
    expect(isInside(target.location, pathOf(h))).toBe(true);
    await target.commitMetadata(patternBytes(30));
    await expect(target.commitMetadata(patternBytes(30))).rejects.toThrow(/already committed/);
  });
});

describe('S3 reachability', () => {
  it('a missing bucket is one STORAGE_UNREACHABLE error naming the URL', async () => {
    const s = new S3CheckpointStorage('s3://no-such-bucket/x', JOB);
    const err = await rejection(s.preflight());
    expect(err.code).toBe('STORAGE_UNREACHABLE');
    expect(err.message).toContain('s3://no-such-bucket/x/job-c');
    expect(err.message).toContain('bucket does not exist');
  });

  it('an endpoint that does not answer is one STORAGE_UNREACHABLE error naming the URL, within the operation timeout', async () => {
    const saved = process.env.AWS_ENDPOINT_URL_S3;
    // A port nothing listens on: the server we started, stopped.
    const gone = await startS3rver([]);
    await gone.stop();
    process.env.AWS_ENDPOINT_URL_S3 = gone.endpoint;
    try {
      const s = new S3CheckpointStorage('s3://weir-commit/x', JOB, { operationTimeoutMs: 400 });
      const err = await rejection(s.preflight());
      expect(err.code).toBe('STORAGE_UNREACHABLE');
      expect(err.message).toContain('s3://weir-commit/x/job-c');
      expect(err.message).not.toContain(s3.env.AWS_SECRET_ACCESS_KEY!);
    } finally {
      process.env.AWS_ENDPOINT_URL_S3 = saved;
    }
  });
});
