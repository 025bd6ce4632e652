/** Choosing what to restore from: pure decisions over probes, then candidates read through a storage. */
import { describe, expect, it } from 'vitest';
import { commitCheckpointMetadata } from '../../../src/checkpoint/metadata/commit.ts';
import { snapshotLocationOf } from '../../../src/checkpoint/restore/locate.ts';
import { restoreCandidates, restoreSourcesOf } from '../../../src/checkpoint/restore/restore-candidates.ts';
import { StorageError } from '../../../src/core/errors.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import { MemoryCheckpointStorage } from '../../../src/storage/memory-storage.ts';
import { encodeEnvelope, ENVELOPE_HEADER_BYTES } from '../../../src/storage/file-format.ts';
import { rangeHandleFor } from '../../../src/storage/state-file.ts';
import { metadataPath } from '../../../src/storage/paths.ts';
import { decodeRestoredFrom, encodeRestoredFrom } from '../../../src/storage/restored-from.ts';
import type { CheckpointDirEntry, SnapshotPathProbe } from '../../../src/storage/storage.ts';
import { sampleMetadata } from '../../storage/fixtures.ts';

const JOB_DIR = '/ck/job-a';

function chk(id: number, hasMetadata: boolean): CheckpointDirEntry {
  return { checkpointId: checkpointId(id), location: `${JOB_DIR}/chk-${id}`, hasMetadata };
}

function dir(path: string, hasMetadata: boolean, checkpointDirs: CheckpointDirEntry[] = []): SnapshotPathProbe {
  return { path, kind: 'dir', hasMetadata, checkpointDirs };
}

function thrown(fn: () => unknown): StorageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StorageError);
    return err as StorageError;
  }
  throw new Error('expected a StorageError');
}

describe('snapshotLocationOf', () => {
  it('names the directory holding _metadata', () => {
    expect(snapshotLocationOf(dir('/sp/savepoint-3-ab', true))).toBe('/sp/savepoint-3-ab');
    expect(snapshotLocationOf({ path: '/ck/job-a/chk-2/_metadata', kind: 'file', hasMetadata: false, checkpointDirs: [] })).toBe('/ck/job-a/chk-2');
    expect(snapshotLocationOf(dir(JOB_DIR, false, [chk(1, true), chk(2, true), chk(3, false)]))).toBe(`${JOB_DIR}/chk-2`);
  });

  it('a path that names no snapshot is MISSING_FILE saying why', () => {
    const cases: Array<[SnapshotPathProbe, string]> = [
      [{ path: '/nope', kind: 'missing', hasMetadata: false, checkpointDirs: [] }, 'no such checkpoint, savepoint or job directory'],
      [{ path: '/ck/job-a/chk-1/k-0', kind: 'file', hasMetadata: false, checkpointDirs: [] }, 'not a checkpoint: expected a directory or a _metadata file'],
      [dir(JOB_DIR, false, [chk(3, false)]), 'no completed checkpoint: 1 checkpoint directory has no _metadata'],
      [dir(JOB_DIR, false, [chk(3, false), chk(4, false)]), 'no completed checkpoint: 2 checkpoint directories have no _metadata'],
      [dir('/ck/job-a/chk-3', false), 'incomplete checkpoint: no _metadata in this directory'],
      [dir('/tmp/empty', false), 'not a checkpoint: no _metadata in this directory'],
      [dir('/ck/job-killed-early', false), 'no checkpoint completed yet'],
      [dir(JOB_DIR, false, [chk(1, false)]), 'left nothing to resume: start the job without --from'],
    ];
    for (const [probe, message] of cases) {
      const err = thrown(() => snapshotLocationOf(probe));
      expect(err.code).toBe('MISSING_FILE');
      expect(err.file).toBe(probe.path);
      expect(err.message).toContain(message);
    }
  });
});

describe('restoreSourcesOf', () => {
  it('a job directory offers its complete checkpoints, newest first', () => {
    expect(restoreSourcesOf(dir(JOB_DIR, false, [chk(1, true), chk(2, false), chk(3, true)]))).toEqual({
      kind: 'job',
      checkpoints: [chk(3, true), chk(1, true)],
    });
  });

  it('a snapshot directory or _metadata file is the one snapshot', () => {
    expect(restoreSourcesOf(dir('/sp/savepoint-3-ab', true))).toEqual({ kind: 'snapshot', location: '/sp/savepoint-3-ab' });
    expect(restoreSourcesOf({ path: '/sp/savepoint-3-ab/_metadata', kind: 'file', hasMetadata: false, checkpointDirs: [] })).toEqual({
      kind: 'snapshot',
      location: '/sp/savepoint-3-ab',
    });
  });

  it('a job directory without a complete checkpoint fails as a location would', () => {
    expect(thrown(() => restoreSourcesOf(dir(JOB_DIR, false, [chk(5, false)]))).message).toContain('no completed checkpoint');
  });

  it('a job directory without a complete checkpoint but with a restored-from record is a job (its lineage comes after)', () => {
    const restoredFrom = { location: '/ck/job-0/chk-4', checkpointId: checkpointId(4), kind: 'checkpoint' as const };
    expect(restoreSourcesOf(dir(JOB_DIR, false, [chk(5, false)]), restoredFrom)).toEqual({ kind: 'job', checkpoints: [] });
    expect(restoreSourcesOf(dir(JOB_DIR, false, [chk(5, true)]), restoredFrom)).toEqual({ kind: 'job', checkpoints: [chk(5, true)] });
  });

  it("a checkpoint numbered at or below the run's origin was left by an earlier run: only the lineage offers what came before", () => {
    // A directory used again: an earlier run kept chk-3 and chk-8; this run started from savepoint 8 and completed chk-10.
    const restoredFrom = { location: '/sp/savepoint-8-ab', checkpointId: checkpointId(8), kind: 'savepoint' as const };
    expect(restoreSourcesOf(dir(JOB_DIR, false, [chk(3, true), chk(8, true), chk(10, true)]), restoredFrom)).toEqual({
      kind: 'job',
      checkpoints: [chk(10, true)],
    });
    expect(restoreSourcesOf(dir(JOB_DIR, false, [chk(3, true), chk(8, true)]), restoredFrom)).toEqual({ kind: 'job', checkpoints: [] });
  });
});

describe('restoreCandidates through a storage', () => {
  async function storageWith(ids: number[]): Promise<MemoryCheckpointStorage> {
    const storage = new MemoryCheckpointStorage(jobId('job-a'));
    for (const id of ids) await commitCheckpointMetadata(storage, sampleMetadata({ id }));
    return storage;
  }

  it('reads a job directory lazily: a corrupt newest checkpoint fails only its own load', async () => {
    const storage = await storageWith([1, 2]);
    const newest = storage.checkpointLocation(checkpointId(2));
    storage.rawFiles().set(metadataPath(newest), new Uint8Array([1, 2, 3]));
    const candidates = await restoreCandidates(storage, storage.jobDir);
    expect(candidates.map((c) => [c.checkpointId, c.location])).toEqual([
      [2, newest],
      [1, storage.checkpointLocation(checkpointId(1))],
    ]);
    await expect(candidates[0]!.load()).rejects.toThrow(metadataPath(newest));
    expect((await candidates[1]!.load()).checkpointId).toBe(1);
  });

  it('a checkpoint copied under another chk-<n> name fails its load', async () => {
    const storage = await storageWith([1]);
    const files = storage.rawFiles();
    files.set(metadataPath(`${storage.jobDir}/chk-4`), files.get(metadataPath(storage.checkpointLocation(checkpointId(1))))!);
    const [newest] = await restoreCandidates(storage, storage.jobDir);
    expect(newest!.checkpointId).toBe(4);
    await expect(newest!.load()).rejects.toThrow('metadata is for checkpoint 1 but its directory is chk-4');
  });

  it('reads one named snapshot at once, so its errors come first', async () => {
    const storage = await storageWith([1]);
    const location = storage.checkpointLocation(checkpointId(1));
    const [only, ...rest] = await restoreCandidates(storage, metadataPath(location));
    expect(rest).toEqual([]);
    expect(only!.location).toBe(location);
    expect((await only!.load()).checkpointId).toBe(1);
    storage.rawFiles().set(metadataPath(location), new Uint8Array([1, 2, 3]));
    await expect(restoreCandidates(storage, location)).rejects.toThrow(StorageError);
  });

  it('checks the shared files of one named snapshot up front: a file cut short of a range it holds names the file and the range', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'), { inlineThresholdBytes: 0 });
    const body = Uint8Array.from({ length: 100 }, (_, i) => i);
    const file = await storage.streamFactory(checkpointId(0)).write('shared', 'changelog-shared', body);
    if (file.type !== 'file') throw new Error('expected a file');
    const ranges = [rangeHandleFor(file.path, 0, body.subarray(0, 60)), rangeHandleFor(file.path, 60, body.subarray(60))];
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 1, keyed: ranges }));
    const location = storage.checkpointLocation(checkpointId(1));
    expect(await restoreCandidates(storage, location)).toHaveLength(1);
    storage.rawFiles().set(
      file.path,
      storage
        .rawFiles()
        .get(file.path)!
        .subarray(0, ENVELOPE_HEADER_BYTES + 80),
    );
    await expect(restoreCandidates(storage, location)).rejects.toThrow(
      `${file.path}: body bytes 60 to 100: truncated: expected ${ENVELOPE_HEADER_BYTES + 100} bytes, found ${ENVELOPE_HEADER_BYTES + 80} (a state file of checkpoint 1 at ${location}, which cannot be restored)`,
    );
  });
});

describe('restored-from record', () => {
  it('round-trips, and a corrupt or incomplete record is CORRUPT_FILE naming the file', () => {
    const r = { location: '/ck/job-0/chk-4', checkpointId: checkpointId(4), kind: 'checkpoint' as const };
    const bytes = encodeRestoredFrom(r);
    expect(decodeRestoredFrom(bytes, '/ck/job-a/_restored_from')).toEqual(r);
    const flipped = Uint8Array.from(bytes);
    flipped[flipped.length - 2]! ^= 0xff;
    const corrupt = thrown(() => decodeRestoredFrom(flipped, '/ck/job-a/_restored_from'));
    expect([corrupt.code, corrupt.file]).toEqual(['CORRUPT_FILE', '/ck/job-a/_restored_from']);
    const bad = encodeEnvelope('restored-from', 1, new TextEncoder().encode('{"location":"/x"}'));
    expect(thrown(() => decodeRestoredFrom(bad, '/f')).message).toContain('lacks location, checkpointId or kind');
  });
});
