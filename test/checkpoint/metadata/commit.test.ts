/** Committing metadata: encoded relative to where `_metadata` goes, checked, then handed to storage as bytes. */
import { describe, expect, it } from 'vitest';
import { commitCheckpointMetadata, commitSavepointMetadata, encodeMetadataFor } from '../../../src/checkpoint/metadata/commit.ts';
import { readMetadataAt } from '../../../src/checkpoint/metadata/read.ts';
import { deserializeMetadata } from '../../../src/checkpoint/metadata/serializer.ts';
import { AssertionError } from '../../../src/core/assert.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import { MemoryCheckpointStorage } from '../../../src/storage/memory-storage.ts';
import { metadataPath, savepointDir } from '../../../src/storage/paths.ts';
import { patternBytes, sampleMetadata } from '../../storage/fixtures.ts';

describe('commitCheckpointMetadata', () => {
  it('stores exactly the encoding for the checkpoint location, which reads back', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'), { inlineThresholdBytes: 0 });
    const h = await storage.streamFactory(checkpointId(3)).write('exclusive', 'k', patternBytes(100));
    const meta = sampleMetadata({ id: 3, keyed: [h] });
    const location = await commitCheckpointMetadata(storage, meta);
    const stored = await storage.readMetadataBytes(location);
    expect(Array.from(stored)).toEqual(Array.from(encodeMetadataFor(meta, location)));
    expect(deserializeMetadata(stored, metadataPath(location))).toEqual(meta);
    expect(await readMetadataAt(storage, location, checkpointId(3))).toEqual(meta);
  });

  it('refuses metadata of another job before storage sees any bytes', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'));
    await expect(commitCheckpointMetadata(storage, sampleMetadata({ id: 1, job: 'job-b' }))).rejects.toThrow(AssertionError);
    expect(storage.rawFiles().size).toBe(0);
  });
});

describe('commitSavepointMetadata', () => {
  it('a memory savepoint is self-contained too: a file outside it is refused, nothing is written', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'), { inlineThresholdBytes: 0 });
    const outside = await storage.streamFactory(checkpointId(1)).write('shared', 's', patternBytes(100));
    const target = storage.createSavepointTarget('memory:savepoints', checkpointId(1), 'ab');
    const before = storage.rawFiles().size;
    await expect(commitSavepointMetadata(target, sampleMetadata({ id: 1, kind: 'savepoint', keyed: [outside] }))).rejects.toThrow(AssertionError);
    expect(storage.rawFiles().size).toBe(before);
  });

  it('writes into the savepoint directory with paths that resolve inside it', async () => {
    const storage = new MemoryCheckpointStorage(jobId('job-a'), { inlineThresholdBytes: 0 });
    const target = storage.createSavepointTarget('memory:savepoints', checkpointId(4), 'cd');
    const h = await target.streamFactory(checkpointId(4)).write('exclusive', 'k', patternBytes(100));
    const location = await commitSavepointMetadata(target, sampleMetadata({ id: 4, kind: 'savepoint', keyed: [h] }));
    expect(location).toBe(savepointDir('memory:savepoints', checkpointId(4), 'cd'));
    expect((await readMetadataAt(storage, location)).kind).toBe('savepoint');
  });
});
