import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitCheckpointMetadata, commitSavepointMetadata } from '../../../src/checkpoint/metadata/commit.ts';
import { filePathsOf } from '../../../src/checkpoint/metadata/walk.ts';
import { AssertionError } from '../../../src/core/assert.ts';
import { StorageError } from '../../../src/core/errors.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import { readCheckpointMetadataAt, resolveCheckpointLocation } from '../../../src/checkpoint/restore/locate.ts';
import { listCheckpointsIn } from '../../../src/checkpoint/restore/snapshot-listing.ts';
import { FsCheckpointStorage, FsSavepointWriter } from '../../../src/storage/fs-storage.ts';
import { savepointDir } from '../../../src/storage/paths.ts';
import { firstSubtask, patternBytes, sampleMetadata, tempDirs } from '../../storage/fixtures.ts';
import type { KeyGroupsStateHandle } from '../../../src/state/handles/key-groups.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** A checkpoint root with job-a (chk-1, chk-2 complete, chk-3 incomplete) and job-b (chk-1 corrupt). */
async function populatedRoot(): Promise<{ root: string; a: FsCheckpointStorage; b: FsCheckpointStorage }> {
  const root = await dirs.make();
  const a = new FsCheckpointStorage(root, jobId('job-a'), { inlineThresholdBytes: 0 });
  const b = new FsCheckpointStorage(root, jobId('job-b'), { inlineThresholdBytes: 0 });
  await a.initialize();
  await b.initialize();
  for (const id of [1, 2]) {
    const h = await a.streamFactory(checkpointId(id)).write('exclusive', 'k', patternBytes(100));
    await commitCheckpointMetadata(a, sampleMetadata({ id, keyed: [h] }));
  }
  await a.streamFactory(checkpointId(3)).write('exclusive', 'k', patternBytes(100));
  const loc = await commitCheckpointMetadata(b, sampleMetadata({ job: 'job-b', id: 1 }));
  const file = path.join(loc, '_metadata');
  const bytes = await readFile(file);
  bytes[bytes.length - 1]! ^= 0xff;
  await writeFile(file, bytes);
  return { root, a, b };
}

async function storageError(p: Promise<unknown>): Promise<StorageError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StorageError);
  return err as StorageError;
}

describe('resolveCheckpointLocation', () => {
  it('accepts a chk-<n> directory, its _metadata file, or a job directory (newest complete)', async () => {
    const { a } = await populatedRoot();
    const chk1 = a.checkpointDir(checkpointId(1));
    const chk2 = a.checkpointDir(checkpointId(2));
    expect(await resolveCheckpointLocation(chk1)).toBe(chk1);
    expect(await resolveCheckpointLocation(path.join(chk1, '_metadata'))).toBe(chk1);
    // chk-3 is newer but has no _metadata.
    expect(await resolveCheckpointLocation(a.jobDir)).toBe(chk2);
    expect((await readCheckpointMetadataAt(a.jobDir)).checkpointId).toBe(2);
    expect(await resolveCheckpointLocation(path.relative(process.cwd(), chk1))).toBe(chk1);
  });

  it('names what it could not find', async () => {
    const { root, a } = await populatedRoot();
    const missing = path.join(root, 'nope');
    const e1 = await storageError(resolveCheckpointLocation(missing));
    expect(e1.code).toBe('MISSING_FILE');
    expect(e1.message).toContain(missing);
    const chk3 = a.checkpointDir(checkpointId(3));
    const e2 = await storageError(resolveCheckpointLocation(chk3));
    expect(e2.message).toBe(`${chk3}: incomplete checkpoint: no _metadata in this directory`);
    const stateFile = path.join(a.checkpointDir(checkpointId(1)), 'k-0');
    const e3 = await storageError(resolveCheckpointLocation(stateFile));
    expect(e3.message).toContain('not a checkpoint');
    const emptyJob = path.join(root, 'job-c');
    await mkdir(path.join(emptyJob, 'chk-1'), { recursive: true });
    const e4 = await storageError(resolveCheckpointLocation(emptyJob));
    expect(e4.message).toContain('no completed checkpoint');
  });

  it('readCheckpointMetadataAt reports a corrupt _metadata naming it', async () => {
    const { b } = await populatedRoot();
    const err = await storageError(readCheckpointMetadataAt(b.checkpointDir(checkpointId(1))));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain(path.join(b.checkpointDir(checkpointId(1)), '_metadata'));
  });
});

describe('listCheckpointsIn', () => {
  it('lists every job under a checkpoint root with status', async () => {
    const { root } = await populatedRoot();
    const listed = await listCheckpointsIn(root);
    expect(listed.map((l) => [l.jobId, l.checkpointId, l.status, l.kind])).toEqual([
      ['job-a', 1, 'complete', 'checkpoint'],
      ['job-a', 2, 'complete', 'checkpoint'],
      ['job-a', 3, 'incomplete', 'checkpoint'],
      ['job-b', 1, 'corrupt', 'checkpoint'],
    ]);
    const [a1, , a3, b1] = listed;
    if (!a1 || !a3 || !b1) throw new Error('expected four listed checkpoints');
    expect(a1.timestampMs).toBe(sampleMetadata({ id: 1 }).timestampMs);
    expect(a1.sizeBytes).toBeGreaterThan(100);
    expect(a3.timestampMs).toBeNull();
    expect(a3.sizeBytes).toBe(118);
    expect(b1.error).toContain('checksum mismatch');
    expect(b1.error).toContain(path.join(root, 'job-b', 'chk-1', '_metadata'));
    expect(listed.every((l) => l.error === undefined || l.status === 'corrupt')).toBe(true);
  });

  it('lists one job directory or one checkpoint directory', async () => {
    const { a } = await populatedRoot();
    expect((await listCheckpointsIn(a.jobDir)).map((l) => l.checkpointId)).toEqual([1, 2, 3]);
    const one = await listCheckpointsIn(a.checkpointDir(checkpointId(2)));
    expect(one.map((l) => [l.jobId, l.checkpointId, l.status])).toEqual([['job-a', 2, 'complete']]);
  });

  it('fails naming a directory that does not exist', async () => {
    const root = await dirs.make();
    const err = await storageError(listCheckpointsIn(path.join(root, 'x')));
    expect(err.code).toBe('MISSING_FILE');
    expect(err.message).toContain(path.join(root, 'x'));
  });
});

describe('FsSavepointWriter', () => {
  async function writeSavepoint(spRoot: string) {
    const dir = savepointDir(spRoot, checkpointId(12), 'f00d');
    const writer = new FsSavepointWriter(dir, { inlineThresholdBytes: 64 });
    const streams = writer.streamFactory(checkpointId(12));
    const data = [patternBytes(500, 1), patternBytes(600, 2), patternBytes(5, 3)] as const;
    const handles = [
      await streams.write('exclusive', 'keyed-counter-0', data[0]),
      await streams.write('shared', 'sst', data[1]),
      await streams.write('exclusive', 'small', data[2]),
    ];
    const location = await commitSavepointMetadata(writer, sampleMetadata({ id: 12, kind: 'savepoint', keyed: handles }));
    return { dir, location, data };
  }

  it('writes a self-contained savepoint-<id>-<rand> directory that can be moved', async () => {
    const spRoot = await dirs.make();
    const { dir, location, data } = await writeSavepoint(spRoot);
    expect(location).toBe(dir);
    expect(path.basename(dir)).toBe('savepoint-12-f00d');
    expect(await resolveCheckpointLocation(dir)).toBe(dir);
    const listed = await listCheckpointsIn(spRoot);
    expect(listed.map((l) => [l.jobId, l.checkpointId, l.kind, l.status])).toEqual([['job-a', 12, 'savepoint', 'complete']]);

    const moved = path.join(await dirs.make(), 'elsewhere');
    await cp(dir, moved, { recursive: true });
    await rm(spRoot, { recursive: true });
    const meta = await readCheckpointMetadataAt(moved);
    for (const p of filePathsOf(meta)) expect(path.dirname(p)).toBe(moved);
    const reader = new FsCheckpointStorage(await dirs.make(), jobId('restored'));
    const keyed = firstSubtask(meta).keyed;
    const read = await Promise.all(keyed.map((k) => reader.readState((k as KeyGroupsStateHandle).stream)));
    expect(read.map((r) => Array.from(r))).toEqual(data.map((d) => Array.from(d)));
  });

  it('refuses metadata that references files outside the savepoint', async () => {
    const dir = savepointDir(await dirs.make(), checkpointId(1), 'a');
    const writer = new FsSavepointWriter(dir);
    const outside = { type: 'file' as const, path: path.join(path.dirname(dir), 'other'), size: 1, checksum: 0 };
    await expect(commitSavepointMetadata(writer, sampleMetadata({ id: 1, kind: 'savepoint', keyed: [outside] }))).rejects.toThrow(AssertionError);
  });
});
