import { afterEach, describe, expect, it } from 'vitest';
import { commitCheckpointMetadata } from '../../src/checkpoint/metadata/commit.ts';
import { readMetadataAt } from '../../src/checkpoint/metadata/read.ts';
import { listCompletedCheckpoints } from '../../src/checkpoint/restore/checkpoint-listing.ts';
import { StorageError } from '../../src/core/errors.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import { MemoryCheckpointStorage } from '../../src/storage/memory-storage.ts';
import { firstSubtask, patternBytes, sampleMetadata, tempDirs } from './fixtures.ts';
import type { KeyGroupsStateHandle } from '../../src/state/handles/key-groups.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describe('MemoryCheckpointStorage', () => {
  it('keys files by memory:<job>/chk-<n>/<name> and memory:<job>/shared/<name>', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'), { inlineThresholdBytes: 0 });
    expect(storage.description).toBe('memory');
    const streams = storage.streamFactory(checkpointId(3));
    const own = await streams.write('exclusive', 'keyed-0', patternBytes(10));
    const shared = await streams.write('shared', 'sst', patternBytes(10));
    const location = await commitCheckpointMetadata(storage, sampleMetadata({ id: 3, keyed: [own, shared] }));
    expect(location).toBe('memory:job-a/chk-3');
    expect([...storage.rawFiles().keys()].sort()).toEqual(['memory:job-a/chk-3/_metadata', 'memory:job-a/chk-3/keyed-0-0', 'memory:job-a/shared/sst-1']);
    // Stored bytes carry the same envelope as files on disk.
    expect(new TextDecoder().decode(storage.rawFiles().get('memory:job-a/chk-3/keyed-0-0')!.subarray(0, 4))).toBe('WRST');
    expect(new TextDecoder().decode(storage.rawFiles().get('memory:job-a/chk-3/_metadata')!.subarray(0, 4))).toBe('WRMD');
  });

  it('keeps state inline by default when it is small', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'));
    expect((await storage.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(1023))).type).toBe('inline');
    expect((await storage.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(1024))).type).toBe('file');
  });

  it('does not see other jobs sharing the same Map', async () => {
    const files = new Map<string, Uint8Array>();
    const a = new MemoryCheckpointStorage(jobId('job-a'), { files });
    const b = new MemoryCheckpointStorage(jobId('job-b'), { files });
    await commitCheckpointMetadata(a, sampleMetadata({ id: 1 }));
    await commitCheckpointMetadata(b, sampleMetadata({ id: 2, job: 'job-b' }));
    expect((await listCompletedCheckpoints(a)).map((l) => l.checkpointId)).toEqual([1]);
    expect((await listCompletedCheckpoints(b)).map((l) => l.checkpointId)).toEqual([2]);
    await a.discardCheckpoint(checkpointId(1));
    expect(files.size).toBe(1);
  });

  it('a missing metadata location is MISSING_FILE naming it', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'));
    const err = await readMetadataAt(storage, 'memory:job-a/chk-9').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('MISSING_FILE');
    expect((err as StorageError).message).toContain('memory:job-a/chk-9/_metadata');
  });

  it('reads state and metadata persisted on disk, as when restoring from a savepoint', async () => {
    const fs = new FsCheckpointStorage(await dirs.make(), jobId('job-a'), { inlineThresholdBytes: 0 });
    await fs.initialize();
    const h = await fs.streamFactory(checkpointId(1)).write('exclusive', 'k', patternBytes(300));
    const location = await commitCheckpointMetadata(fs, sampleMetadata({ id: 1, keyed: [h] }));
    const memory = new MemoryCheckpointStorage(jobId('job-a'));
    const meta = await readMetadataAt(memory, location);
    expect(Array.from(await memory.readState((firstSubtask(meta).keyed[0] as KeyGroupsStateHandle).stream))).toEqual(Array.from(patternBytes(300)));
  });
});
