import { cp, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commitCheckpointMetadata } from '../../src/checkpoint/metadata/commit.ts';
import { listCompletedCheckpoints } from '../../src/checkpoint/restore/checkpoint-listing.ts';
import { filePathsOf } from '../../src/checkpoint/metadata/walk.ts';
import { StorageError } from '../../src/core/errors.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import { readCheckpointMetadataAt } from '../../src/checkpoint/restore/locate.ts';
import { FsCheckpointStorage, incompleteCheckpointDirs } from '../../src/storage/fs-storage.ts';
import type { StreamStateHandle } from '../../src/storage/handles.ts';
import { firstSubtask, patternBytes, sampleMetadata, tempDirs } from './fixtures.ts';
import type { KeyGroupsStateHandle } from '../../src/state/handles/key-groups.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const JOB = jobId('job-a');

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

function pathOf(h: StreamStateHandle): string {
  if (h.type !== 'file') throw new Error('expected a file handle');
  return h.path;
}

describe('FsCheckpointStorage on disk', () => {
  it('lays files out as <root>/<job>/chk-<n>/ and shared/, with absolute handle paths', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB, {
      inlineThresholdBytes: 0,
      fileSuffix: (() => {
        let i = 0;
        return () => `s${i++}`;
      })(),
    });
    await storage.initialize();
    expect(storage.description).toBe(path.join(root, 'job-a'));
    expect((await readdir(storage.jobDir)).sort()).toEqual(['shared', 'taskowned']);
    const streams = storage.streamFactory(checkpointId(5));
    const own = await streams.write('exclusive', 'keyed-counter-0', patternBytes(10));
    const shared = await streams.write('shared', 'sst/1', patternBytes(10));
    expect(pathOf(own)).toBe(path.join(root, 'job-a', 'chk-5', 'keyed-counter-0-s0'));
    expect(pathOf(shared)).toBe(path.join(root, 'job-a', 'shared', 'sst_1-s1'));
    const location = await commitCheckpointMetadata(storage, sampleMetadata({ id: 5, keyed: [own, shared] }));
    expect(location).toBe(path.join(root, 'job-a', 'chk-5'));
    expect((await readdir(location)).sort()).toEqual(['_metadata', 'keyed-counter-0-s0']);
    expect((await stat(pathOf(own))).size).toBe(10 + 18);
  });

  it('a checkpoint directory without _metadata is incomplete: not listed, reported for cleanup', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB, { inlineThresholdBytes: 0 });
    await storage.initialize();
    await commitCheckpointMetadata(
      storage,
      sampleMetadata({ id: 1, keyed: [await storage.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(50))] }),
    );
    // Checkpoint 2 crashed after writing state and a temporary _metadata, before the rename.
    await storage.streamFactory(checkpointId(2)).write('exclusive', 'k', patternBytes(50));
    await writeFile(path.join(storage.checkpointDir(checkpointId(2)), '_metadata.tmp-7'), 'partial');
    expect((await listCompletedCheckpoints(storage)).map((l) => l.checkpointId)).toEqual([1]);
    expect(await incompleteCheckpointDirs(storage.jobDir)).toEqual([storage.checkpointDir(checkpointId(2))]);
    await storage.discardCheckpoint(checkpointId(2));
    expect(await incompleteCheckpointDirs(storage.jobDir)).toEqual([]);
    expect(await incompleteCheckpointDirs(path.join(root, 'no-such-job'))).toEqual([]);
  });

  it('ignores stray entries in the job directory', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB);
    await storage.initialize();
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 3 }));
    await writeFile(path.join(storage.jobDir, 'chk-9'), 'a file, not a dir');
    await mkdir(path.join(storage.jobDir, 'chk-007'));
    await mkdir(path.join(storage.jobDir, 'notes'));
    expect((await listCompletedCheckpoints(storage)).map((l) => l.checkpointId)).toEqual([3]);
  });

  it('metadata whose id differs from its directory name is corrupt', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB);
    await storage.initialize();
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 3 }));
    await rename(storage.checkpointDir(checkpointId(3)), storage.checkpointDir(checkpointId(4)));
    const err = await listCompletedCheckpoints(storage).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).message).toContain(path.join(storage.checkpointDir(checkpointId(4)), '_metadata'));
    expect((err as StorageError).message).toContain('metadata is for checkpoint 3 but its directory is chk-4');
  });

  it('discardJob removes the job directory only when no checkpoint is left', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB);
    await storage.initialize();
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 1 }));
    await storage.discardJob();
    expect(await exists(storage.jobDir)).toBe(true);
    await storage.discardCheckpoint(checkpointId(1));
    await storage.discardJob();
    expect(await exists(storage.jobDir)).toBe(false);
    await storage.discardJob();
  });

  it('discardJob keeps a shared folder that still holds files', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB, { inlineThresholdBytes: 0 });
    await storage.initialize();
    const shared = await storage.streamFactory(checkpointId(1)).write('shared', 's', patternBytes(10));
    await storage.discardJob();
    expect(await exists(pathOf(shared))).toBe(true);
    expect(await exists(path.join(storage.jobDir, 'taskowned'))).toBe(false);
  });

  it('a copied checkpoint directory whose files are all inside it reads from its new place', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(root, JOB, { inlineThresholdBytes: 100 });
    await storage.initialize();
    const streams = storage.streamFactory(checkpointId(8));
    const data = [patternBytes(1000, 1), patternBytes(20, 2), patternBytes(3000, 3)] as const;
    const [k, inline, ch] = [
      await streams.write('exclusive', 'keyed', data[0]),
      await streams.write('exclusive', 'op', data[1]),
      await streams.write('exclusive', 'channel', data[2]),
    ];
    const location = await commitCheckpointMetadata(storage, sampleMetadata({ id: 8, keyed: [k], operator: inline, channel: ch }));
    const copy = path.join(await dirs.make(), 'archive', 'kept-checkpoint');
    await cp(location, copy, { recursive: true });
    await rm(root, { recursive: true });

    const meta = await readCheckpointMetadataAt(copy);
    expect(filePathsOf(meta)).toEqual([path.join(copy, path.basename(pathOf(k))), path.join(copy, path.basename(pathOf(ch)))]);
    const st = firstSubtask(meta);
    const [channel] = st.channels;
    if (!channel) throw new Error('the copied metadata has no channel state');
    const reader = new FsCheckpointStorage(await dirs.make(), jobId('reader'));
    expect(Array.from(await reader.readState((st.keyed[0] as KeyGroupsStateHandle).stream))).toEqual(Array.from(data[0]));
    expect(Array.from(await reader.readState(st.operator!.stream))).toEqual(Array.from(data[1]));
    expect(Array.from(await reader.readState(channel.stream))).toEqual(Array.from(data[2]));
  });

  it('a missing job directory has no checkpoints', async () => {
    const root = await dirs.make();
    const storage = new FsCheckpointStorage(path.join(root, 'never-created'), JOB);
    expect(await listCompletedCheckpoints(storage)).toEqual([]);
    await storage.discardJob();
    await storage.discardCheckpoint(checkpointId(1));
  });
});
