/** Finding snapshot directories on disk by name and entries, nothing decoded. */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/core/errors.ts';
import { checkpointId } from '../../src/core/ids.ts';
import { findSnapshotDirs, incompleteCheckpointDirs, probeFs } from '../../src/storage/fs-inspect.ts';
import { tempDirs } from './fixtures.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** root/job-a/{chk-1 (with _metadata), chk-2}, root/job-b/chk-5, and a savepoint root beside it. */
async function layout(): Promise<{ root: string; spRoot: string }> {
  const base = await dirs.make();
  const root = path.join(base, 'checkpoints');
  const spRoot = path.join(base, 'savepoints');
  for (const d of ['job-a/chk-1', 'job-a/chk-2', 'job-a/shared', 'job-b/chk-5']) await mkdir(path.join(root, d), { recursive: true });
  await writeFile(path.join(root, 'job-a/chk-1/_metadata'), 'not decoded here');
  await mkdir(path.join(spRoot, 'savepoint-7-ab12'), { recursive: true });
  await writeFile(path.join(spRoot, 'savepoint-7-ab12/_metadata'), 'x');
  await mkdir(path.join(spRoot, 'notes'));
  return { root, spRoot };
}

describe('findSnapshotDirs', () => {
  it('finds checkpoints under a checkpoint root, a job directory, or one chk-<n>', async () => {
    const { root } = await layout();
    const entry = (job: string, id: number, hasMetadata: boolean) => ({
      jobId: job,
      checkpointId: checkpointId(id),
      location: path.join(root, job, `chk-${id}`),
      kind: 'checkpoint',
      hasMetadata,
    });
    expect((await findSnapshotDirs(root)).sort((a, b) => a.location.localeCompare(b.location))).toEqual([
      entry('job-a', 1, true),
      entry('job-a', 2, false),
      entry('job-b', 5, false),
    ]);
    expect(await findSnapshotDirs(path.join(root, 'job-a'))).toEqual([entry('job-a', 1, true), entry('job-a', 2, false)]);
    expect(await findSnapshotDirs(path.join(root, 'job-a', 'chk-2'))).toEqual([entry('job-a', 2, false)]);
  });

  it('finds savepoints under a savepoint root or as the directory itself, with no job id', async () => {
    const { spRoot } = await layout();
    const savepoint = { jobId: null, checkpointId: 7, location: path.join(spRoot, 'savepoint-7-ab12'), kind: 'savepoint', hasMetadata: true };
    expect(await findSnapshotDirs(spRoot)).toEqual([savepoint]);
    expect(await findSnapshotDirs(savepoint.location)).toEqual([savepoint]);
  });

  it('a missing path or a file is MISSING_FILE naming it', async () => {
    const { root } = await layout();
    for (const [p, why] of [
      [path.join(root, 'nope'), 'no such directory'],
      [path.join(root, 'job-a/chk-1/_metadata'), 'not a directory'],
    ] as const) {
      const err = await findSnapshotDirs(p).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StorageError);
      expect((err as StorageError).code).toBe('MISSING_FILE');
      expect((err as StorageError).message).toContain(p);
      expect((err as StorageError).message).toContain(why);
    }
  });
});

describe('probeFs', () => {
  it('resolves relative paths and lists chk-<n> only for a directory without _metadata', async () => {
    const { root } = await layout();
    const jobA = path.join(root, 'job-a');
    const probe = await probeFs(path.relative(process.cwd(), jobA));
    expect(probe).toEqual({
      path: jobA,
      kind: 'dir',
      hasMetadata: false,
      checkpointDirs: [
        { checkpointId: 1, location: path.join(jobA, 'chk-1'), hasMetadata: true },
        { checkpointId: 2, location: path.join(jobA, 'chk-2'), hasMetadata: false },
      ],
    });
    expect(await probeFs(path.join(jobA, 'chk-1'))).toEqual({ path: path.join(jobA, 'chk-1'), kind: 'dir', hasMetadata: true, checkpointDirs: [] });
    expect((await probeFs(path.join(jobA, 'chk-1', '_metadata'))).kind).toBe('file');
    expect((await probeFs(path.join(jobA, 'gone'))).kind).toBe('missing');
  });

  it('follows a symlinked snapshot directory', async () => {
    const { root } = await layout();
    const link = path.join(await dirs.make(), 'latest');
    await symlink(path.join(root, 'job-a', 'chk-1'), link);
    expect(await probeFs(link)).toMatchObject({ path: link, kind: 'dir', hasMetadata: true });
  });
});

describe('incompleteCheckpointDirs', () => {
  it('names chk-<n> without _metadata; a missing job directory has none', async () => {
    const { root } = await layout();
    expect(await incompleteCheckpointDirs(path.join(root, 'job-a'))).toEqual([path.join(root, 'job-a', 'chk-2')]);
    expect(await incompleteCheckpointDirs(path.join(root, 'job-c'))).toEqual([]);
  });
});
