/**
 * Behaviour every CheckpointStorage shares, run against the file-system, the memory and the S3
 * storage (a real s3rver on loopback, started here):
 * first the bytes it moves (state files, `_metadata` bytes, listings, probes), then checkpoints
 * committed and read through `checkpoint/metadata`, as the coordinator and restore do.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commitCheckpointMetadata } from '../../src/checkpoint/metadata/commit.ts';
import { readMetadataAt } from '../../src/checkpoint/metadata/read.ts';
import { listCompletedCheckpoints } from '../../src/checkpoint/restore/checkpoint-listing.ts';
import { filePathsOf, sharedPathsOf } from '../../src/checkpoint/metadata/walk.ts';
import { AssertionError } from '../../src/core/assert.ts';
import { StorageError } from '../../src/core/errors.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import type { StreamStateHandle } from '../../src/storage/handles.ts';
import { MemoryCheckpointStorage } from '../../src/storage/memory-storage.ts';
import { ENVELOPE_HEADER_BYTES } from '../../src/storage/file-format.ts';
import { rangeHandleFor } from '../../src/storage/state-file.ts';
import { isInside, joinPath, metadataPath } from '../../src/storage/paths.ts';
import { S3CheckpointStorage } from '../../src/storage/s3/s3-storage.ts';
import { SharedStateRegistry } from '../../src/storage/shared-registry.ts';
import type { CheckpointStorage } from '../../src/storage/storage.ts';
import { firstSubtask, patternBytes, sampleMetadata, tempDirs } from './fixtures.ts';
import type { KeyGroupsStateHandle } from '../../src/state/handles/key-groups.ts';
import { type S3TestServer, startS3rver } from '../support/s3-server.ts';

interface Harness {
  storage: CheckpointStorage & { readonly jobDir: string; readonly sharedDir: string; checkpointDir(id: number): string };
  /** Replaces the stored bytes of `file`. */
  mutate(file: string, fn: (bytes: Uint8Array) => Uint8Array): Promise<void>;
  remove(file: string): Promise<void>;
  /** A new storage instance over the same stored data, as after a process restart. */
  restart(): Harness['storage'];
}

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

let s3: S3TestServer;
let s3Prefixes = 0;
beforeAll(async () => {
  s3 = await startS3rver(['weir-contract']);
  // The AWS way: the SDK finds endpoint, region and credentials in the environment.
  Object.assign(process.env, s3.env);
});
afterAll(() => s3.stop());

const JOB = jobId('job-a');
const OPTIONS = { inlineThresholdBytes: 64 };

const harnesses: Array<[string, () => Promise<Harness>]> = [
  [
    'FsCheckpointStorage',
    async () => {
      const root = await dirs.make();
      return {
        storage: new FsCheckpointStorage(root, JOB, OPTIONS),
        mutate: async (file, fn) => writeFile(file, fn(new Uint8Array(await readFile(file)))),
        remove: (file) => rm(file),
        restart: () => new FsCheckpointStorage(root, JOB, OPTIONS),
      };
    },
  ],
  [
    'MemoryCheckpointStorage',
    async () => {
      const storage = new MemoryCheckpointStorage(JOB, OPTIONS);
      const files = storage.rawFiles();
      return {
        storage,
        mutate: async (file, fn) => void files.set(file, fn(files.get(file)!)),
        remove: async (file) => void files.delete(file),
        restart: () => new MemoryCheckpointStorage(JOB, { ...OPTIONS, files }),
      };
    },
  ],
  [
    'S3CheckpointStorage',
    async () => {
      const root = `s3://weir-contract/run-${++s3Prefixes}`;
      const storage = new S3CheckpointStorage(root, JOB, OPTIONS);
      return {
        storage,
        mutate: async (file, fn) => storage.objects.put(file, Buffer.from(fn((await storage.objects.get(file, 'test')).bytes))),
        remove: (file) => storage.objects.deleteAll([file]),
        restart: () => new S3CheckpointStorage(root, JOB, OPTIONS),
      };
    },
  ],
];

async function storageError(p: Promise<unknown>): Promise<StorageError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StorageError);
  return err as StorageError;
}

function pathOf(h: StreamStateHandle): string {
  if (h.type !== 'file') throw new Error('expected a file handle');
  return h.path;
}

describe.each(harnesses)('%s', (_name, makeHarness) => {
  it('writes exclusive and shared state and reads it back', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const streams = storage.streamFactory(checkpointId(1));
    const a = patternBytes(1000, 1);
    const b = patternBytes(300, 2);
    const ha = await streams.write('exclusive', 'keyed-counter-0', a);
    const hb = await streams.write('shared', 'sst', b);
    expect(ha).toMatchObject({ type: 'file', size: 1000, checksum: crc32(a) >>> 0 });
    expect(isInside(storage.checkpointDir(1), pathOf(ha))).toBe(true);
    expect(isInside(storage.sharedDir, pathOf(hb))).toBe(true);
    expect(pathOf(ha)).not.toBe(pathOf(hb));
    expect(Array.from(await storage.readState(ha))).toEqual(Array.from(a));
    expect(Array.from(await storage.readState(hb))).toEqual(Array.from(b));
  });

  it('keeps small state inline, copied from the caller', async () => {
    const { storage } = await makeHarness();
    const data = patternBytes(10);
    const h = await storage.streamFactory(checkpointId(1)).write('exclusive', 'op', data);
    data[0]! ^= 0xff;
    expect(h.type).toBe('inline');
    const read = await storage.readState(h);
    expect(Array.from(read)).toEqual(Array.from(patternBytes(10)));
    read[1]! ^= 0xff;
    expect(Array.from(await storage.readState(h))).toEqual(Array.from(patternBytes(10)));
  });

  it('gives each write its own file, even with the same name hint', async () => {
    const { storage } = await makeHarness();
    const streams = storage.streamFactory(checkpointId(1));
    const hs = await Promise.all([1, 2, 3].map((i) => streams.write('exclusive', 'same', patternBytes(100, i))));
    expect(new Set(hs.map(pathOf)).size).toBe(3);
    for (const [i, h] of hs.entries()) expect(Array.from(await storage.readState(h))).toEqual(Array.from(patternBytes(100, i + 1)));
  });

  it('a flipped byte is CORRUPT_FILE naming the file', async () => {
    const { storage, mutate } = await makeHarness();
    const h = await storage.streamFactory(checkpointId(1)).write('exclusive', 'keyed', patternBytes(500));
    await mutate(pathOf(h), (bytes) => {
      const copy = Uint8Array.from(bytes);
      copy[250]! ^= 0x01;
      return copy;
    });
    const err = await storageError(storage.readState(h));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain(pathOf(h));
    expect(err.file).toBe(pathOf(h));
  });

  it('a truncated file is CORRUPT_FILE naming the file', async () => {
    const { storage, mutate } = await makeHarness();
    const h = await storage.streamFactory(checkpointId(1)).write('shared', 'keyed', patternBytes(500));
    await mutate(pathOf(h), (bytes) => bytes.slice(0, 300));
    const err = await storageError(storage.readState(h));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain(pathOf(h));
    expect(err.message).toContain('truncated: expected 518 bytes, found 300');
  });

  it('a deleted file is MISSING_FILE naming the file', async () => {
    const { storage, remove } = await makeHarness();
    const h = await storage.streamFactory(checkpointId(1)).write('exclusive', 'keyed', patternBytes(500));
    await remove(pathOf(h));
    const err = await storageError(storage.readState(h));
    expect(err.code).toBe('MISSING_FILE');
    expect(err.message).toContain(pathOf(h));
  });

  it('a valid file that is not the one the handle recorded is CORRUPT_FILE', async () => {
    const { storage } = await makeHarness();
    const streams = storage.streamFactory(checkpointId(1));
    const a = await streams.write('exclusive', 'a', patternBytes(500, 1));
    const b = await streams.write('exclusive', 'b', patternBytes(500, 2));
    const swapped = { ...a, path: pathOf(b) } as StreamStateHandle;
    const err = await storageError(storage.readState(swapped));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.message).toContain(pathOf(b));
    expect(err.message).toContain('checkpoint metadata expects');
  });

  it('reads and checks byte ranges of a shared file; a flipped byte or a cut file is CORRUPT_FILE naming the file and the range', async () => {
    const { storage, mutate } = await makeHarness();
    await storage.initialize();
    const body = patternBytes(600, 3);
    const file = pathOf(await storage.streamFactory(checkpointId(0)).write('shared', 'changelog-shared', body));
    const [a, b] = [rangeHandleFor(file, 0, body.subarray(0, 250)), rangeHandleFor(file, 250, body.subarray(250, 600))];
    expect(Array.from(await storage.readState(a))).toEqual(Array.from(body.subarray(0, 250)));
    expect(Array.from(await storage.readState(b))).toEqual(Array.from(body.subarray(250, 600)));
    await storage.checkStateFile(b); // the file is there, complete, and holds the range
    await mutate(file, (bytes) => {
      const copy = Uint8Array.from(bytes);
      copy[ENVELOPE_HEADER_BYTES + 300]! ^= 0x01;
      return copy;
    });
    const err = await storageError(storage.readState(b));
    expect(err.code).toBe('CORRUPT_FILE');
    expect(err.file).toBe(file);
    expect(err.message).toContain(`${file}: body bytes 250 to 600: checksum mismatch`);
    expect(Array.from(await storage.readState(a))).toEqual(Array.from(body.subarray(0, 250)));
    await mutate(file, (bytes) => bytes.subarray(0, ENVELOPE_HEADER_BYTES + 400));
    expect((await storageError(storage.readState(b))).message).toContain(`${file}: body bytes 250 to 600: truncated`);
    expect((await storageError(storage.checkStateFile(b))).message).toContain(`${file}: body bytes 250 to 600: truncated`);
  });

  it('corrupt inline state is detected', async () => {
    const { storage } = await makeHarness();
    const h = await storage.streamFactory(checkpointId(1)).write('exclusive', 'op', patternBytes(10));
    const bad = { ...h, checksum: (h.checksum + 1) >>> 0 } as StreamStateHandle;
    expect((await storageError(storage.readState(bad))).code).toBe('CORRUPT_FILE');
  });

  it('commits _metadata bytes as given, into checkpointLocation, and reads them back', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    await storage.streamFactory(checkpointId(2)).write('exclusive', 'k', patternBytes(200));
    expect(await storage.listCheckpointDirs()).toEqual([{ checkpointId: 2, location: storage.checkpointLocation(checkpointId(2)), hasMetadata: false }]);
    const bytes = patternBytes(77, 5);
    const location = await storage.commitMetadata(checkpointId(2), bytes);
    expect(location).toBe(storage.checkpointDir(2));
    expect(location).toBe(storage.checkpointLocation(checkpointId(2)));
    expect(Array.from(await storage.readMetadataBytes(location))).toEqual(Array.from(bytes));
    expect(await storage.listCheckpointDirs()).toEqual([{ checkpointId: 2, location, hasMetadata: true }]);
  });

  it("lists chk-<n> directories ascending, complete or not, and only this job's", async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    for (const id of [10, 2, 7]) await storage.streamFactory(checkpointId(id)).write('exclusive', 'k', patternBytes(100));
    await storage.commitMetadata(checkpointId(7), patternBytes(10));
    const listed = await storage.listCheckpointDirs();
    expect(listed.map((d) => [d.checkpointId, d.hasMetadata])).toEqual([
      [2, false],
      [7, true],
      [10, false],
    ]);
    const { storage: other } = await makeHarness();
    expect(await other.listCheckpointDirs()).toEqual([]);
  });

  it('refuses _metadata bytes for a discarded checkpoint or one already committed', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    await storage.commitMetadata(checkpointId(1), patternBytes(10));
    await expect(storage.commitMetadata(checkpointId(1), patternBytes(10))).rejects.toThrow(AssertionError);
    await storage.discardCheckpoint(checkpointId(3));
    const err = await storageError(storage.commitMetadata(checkpointId(3), patternBytes(10)));
    expect(err.code).toBe('STORAGE_IO');
    expect(err.message).toContain('discarded');
    expect((await storage.listCheckpointDirs()).map((d) => d.checkpointId)).toEqual([1]);
  });

  it('missing _metadata bytes are MISSING_FILE naming the file', async () => {
    const { storage } = await makeHarness();
    const location = storage.checkpointLocation(checkpointId(9));
    const err = await storageError(storage.readMetadataBytes(location));
    expect(err.code).toBe('MISSING_FILE');
    expect(err.message).toContain(metadataPath(location));
  });

  it('probes a path: missing, a file, a snapshot directory, a job directory with its chk-<n>', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const h = await storage.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(200));
    const chk1 = await storage.commitMetadata(checkpointId(1), patternBytes(10));
    await storage.streamFactory(checkpointId(2)).write('exclusive', 'k', patternBytes(200));
    const chk2 = storage.checkpointLocation(checkpointId(2));
    expect(await storage.probe(joinPath(storage.jobDir, 'nothing'))).toEqual({
      path: joinPath(storage.jobDir, 'nothing'),
      kind: 'missing',
      hasMetadata: false,
      checkpointDirs: [],
    });
    expect((await storage.probe(pathOf(h))).kind).toBe('file');
    expect((await storage.probe(metadataPath(chk1))).kind).toBe('file');
    expect(await storage.probe(chk1)).toEqual({ path: chk1, kind: 'dir', hasMetadata: true, checkpointDirs: [] });
    expect(await storage.probe(storage.jobDir)).toEqual({
      path: storage.jobDir,
      kind: 'dir',
      hasMetadata: false,
      checkpointDirs: [
        { checkpointId: 1, location: chk1, hasMetadata: true },
        { checkpointId: 2, location: chk2, hasMetadata: false },
      ],
    });
  });

  it('sizes a snapshot directory by the bytes of the files inside it', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const streams = storage.streamFactory(checkpointId(1));
    await streams.write('exclusive', 'a', patternBytes(300));
    await streams.write('exclusive', 'b', patternBytes(500));
    await streams.write('shared', 's', patternBytes(4000));
    const location = await storage.commitMetadata(checkpointId(1), patternBytes(40));
    // Each state file carries an 18-byte envelope; shared files are outside the directory.
    expect(await storage.dirSizeBytes(location)).toBe(300 + 18 + 500 + 18 + 40);
  });

  it('a checkpoint is listed only once its metadata is committed, and reads back', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const h = await storage.streamFactory(checkpointId(4)).write('exclusive', 'keyed', patternBytes(200));
    expect(await listCompletedCheckpoints(storage)).toEqual([]);
    const meta = sampleMetadata({ id: 4, keyed: [h] });
    const location = await commitCheckpointMetadata(storage, meta);
    expect(location).toBe(storage.checkpointDir(4));
    const listed = await listCompletedCheckpoints(storage);
    expect(listed).toHaveLength(1);
    const [only] = listed;
    if (!only) throw new Error('checkpoint 4 is not listed');
    expect(only).toMatchObject({ checkpointId: 4, location, timestampMs: meta.timestampMs, kind: 'checkpoint' });
    expect(only.sizeBytes).toBeGreaterThan(200);
    expect(await readMetadataAt(storage, location)).toEqual(meta);
  });

  it('lists checkpoints ascending by id whatever the commit order', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    for (const id of [10, 2, 7]) {
      const h = await storage.streamFactory(checkpointId(id)).write('exclusive', 'k', patternBytes(100 * id));
      await commitCheckpointMetadata(storage, sampleMetadata({ id, keyed: [h], kind: id === 7 ? 'savepoint' : 'checkpoint' }));
    }
    const listed = await listCompletedCheckpoints(storage);
    expect(listed.map((l) => l.checkpointId)).toEqual([2, 7, 10]);
    expect(listed.map((l) => l.kind)).toEqual(['checkpoint', 'savepoint', 'checkpoint']);
    const [first, , third] = listed;
    if (!first || !third) throw new Error('expected three listed checkpoints');
    expect(third.sizeBytes).toBeGreaterThan(first.sizeBytes);
  });

  it('counts referenced shared files in a checkpoint size', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const own = await storage.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(100));
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 1, keyed: [own] }));
    const shared = await storage.streamFactory(checkpointId(2)).write('shared', 'k', patternBytes(5000));
    const own2 = await storage.streamFactory(checkpointId(2)).write('exclusive', 'k', patternBytes(100));
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 2, keyed: [own2, shared, shared] }));
    const [one, two] = await listCompletedCheckpoints(storage);
    if (!one || !two) throw new Error('expected two listed checkpoints');
    expect(two.sizeBytes - one.sizeBytes).toBeGreaterThanOrEqual(5000);
    // Referenced twice, counted once (the rest is the larger _metadata).
    expect(two.sizeBytes - one.sizeBytes).toBeLessThan(6000);
  });

  it('refuses to commit a checkpoint twice or for another job', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 1 }));
    await expect(commitCheckpointMetadata(storage, sampleMetadata({ id: 1 }))).rejects.toThrow(AssertionError);
    await expect(commitCheckpointMetadata(storage, sampleMetadata({ id: 2, job: 'other' }))).rejects.toThrow(AssertionError);
  });

  it('corrupt metadata fails listing and reading, naming _metadata', async () => {
    const { storage, mutate } = await makeHarness();
    await storage.initialize();
    const location = await commitCheckpointMetadata(storage, sampleMetadata({ id: 3, keyed: [] }));
    await mutate(metadataPath(location), (bytes) => {
      const copy = Uint8Array.from(bytes);
      copy[copy.byteLength - 2]! ^= 0x20;
      return copy;
    });
    const listErr = await storageError(listCompletedCheckpoints(storage));
    expect(listErr.code).toBe('CORRUPT_FILE');
    expect(listErr.message).toContain(metadataPath(location));
    const readErr = await storageError(readMetadataAt(storage, location));
    expect(readErr.message).toContain(metadataPath(location));
  });

  it('discarding a checkpoint removes its own files, never shared ones', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const streams = storage.streamFactory(checkpointId(1));
    const own = await streams.write('exclusive', 'k', patternBytes(200));
    const shared = await streams.write('shared', 's', patternBytes(200));
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 1, keyed: [own, shared] }));
    await storage.discardCheckpoint(checkpointId(1));
    expect(await listCompletedCheckpoints(storage)).toEqual([]);
    expect((await storageError(storage.readState(own))).code).toBe('MISSING_FILE');
    expect(Array.from(await storage.readState(shared))).toEqual(Array.from(patternBytes(200)));
    await storage.discardShared(shared);
    expect((await storageError(storage.readState(shared))).code).toBe('MISSING_FILE');
    await storage.discardShared(shared);
    await storage.discardCheckpoint(checkpointId(99));
  });

  it('discardShared refuses files outside the shared folder', async () => {
    const { storage } = await makeHarness();
    const own = await storage.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(200));
    await expect(storage.discardShared(own)).rejects.toThrow(AssertionError);
    expect(Array.from(await storage.readState(own))).toEqual(Array.from(patternBytes(200)));
  });

  it('after a restart, lists what was committed and never overwrites old files', async () => {
    const { storage, restart } = await makeHarness();
    await storage.initialize();
    const old = await storage.streamFactory(checkpointId(1)).write('shared', 'sst', patternBytes(300, 1));
    await commitCheckpointMetadata(storage, sampleMetadata({ id: 1, keyed: [old] }));
    const again = restart();
    await again.initialize();
    expect((await listCompletedCheckpoints(again)).map((l) => l.checkpointId)).toEqual([1]);
    const fresh = await again.streamFactory(checkpointId(2)).write('shared', 'sst', patternBytes(300, 2));
    expect(pathOf(fresh)).not.toBe(pathOf(old));
    expect(Array.from(await again.readState(old))).toEqual(Array.from(patternBytes(300, 1)));
  });

  it('with the shared-state registry, a shared file lives until no retained checkpoint needs it', async () => {
    const { storage } = await makeHarness();
    await storage.initialize();
    const registry = new SharedStateRegistry();
    const base = await storage.streamFactory(checkpointId(1)).write('shared', 'sst', patternBytes(400, 1));
    const meta1 = sampleMetadata({ id: 1, keyed: [base] });
    await commitCheckpointMetadata(storage, meta1);
    registry.register(checkpointId(1), sharedPathsOf(meta1, storage.sharedDir));
    const delta = await storage.streamFactory(checkpointId(2)).write('shared', 'sst', patternBytes(400, 2));
    const meta2 = sampleMetadata({ id: 2, keyed: [base, delta] });
    await commitCheckpointMetadata(storage, meta2);
    registry.register(checkpointId(2), sharedPathsOf(meta2, storage.sharedDir));

    // Checkpoint 1 is subsumed: its folder goes, the shared file it shares with 2 stays.
    const unreferenced1 = registry.release(checkpointId(1));
    expect(unreferenced1).toEqual([]);
    await storage.discardCheckpoint(checkpointId(1));
    const [remaining] = await listCompletedCheckpoints(storage);
    if (!remaining) throw new Error('checkpoint 2 is not listed');
    const restored = await readMetadataAt(storage, remaining.location);
    for (const h of firstSubtask(restored).keyed) expect((await storage.readState((h as KeyGroupsStateHandle).stream)).byteLength).toBe(400);

    const unreferenced2 = registry.release(checkpointId(2));
    expect(unreferenced2.sort()).toEqual(filePathsOf(meta2).sort());
    for (const p of unreferenced2) await storage.discardShared({ type: 'file', path: p, size: 0, checksum: 0 });
    expect((await storageError(storage.readState(base))).code).toBe('MISSING_FILE');
  });
});
