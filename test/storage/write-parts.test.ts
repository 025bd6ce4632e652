/**
 * `CheckpointStreamFactory.writeParts` (a large snapshot written while records flow): a stream
 * given in parts is persisted exactly as `write` persists the joined bytes (same file bytes, same
 * handle), it reads back verified, and a stream under the inline threshold stays inline.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/core/errors.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import { FsSavepointWriter } from '../../src/storage/fs-savepoint.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import type { StreamStateHandle } from '../../src/storage/handles.ts';
import { joinParts, type CheckpointStreamFactory } from '../../src/storage/storage.ts';
import { patternBytes, tempDirs } from './fixtures.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** Parts of uneven sizes, one empty, about 9 MB in all: more than one vectored write. */
function parts(): Uint8Array[] {
  return [patternBytes(4, 1), patternBytes(3_000_000, 2), new Uint8Array(0), patternBytes(5_000_001, 3), patternBytes(1_234_567, 4), patternBytes(10, 5)];
}

const fileOf = (h: StreamStateHandle): string => {
  if (h.type !== 'file') throw new Error(`expected a file handle, got ${h.type}`);
  return h.path;
};

async function factories(): Promise<Array<[string, CheckpointStreamFactory, (h: StreamStateHandle) => Promise<Uint8Array>]>> {
  const storage = new FsCheckpointStorage(await dirs.make(), jobId('job'));
  await storage.initialize();
  const savepoint = new FsSavepointWriter(await dirs.make());
  return [
    ['checkpoint storage', storage.streamFactory(checkpointId(1)), (h) => storage.readState(h)],
    ['savepoint writer', savepoint.streamFactory(checkpointId(1)), (h) => storage.readState(h)],
  ];
}

describe('writeParts', () => {
  it('writes the file write() writes for the joined bytes, and it reads back verified', async () => {
    for (const [label, streams, read] of await factories()) {
      const joined = joinParts(parts());
      const whole = await streams.write('exclusive', 'whole', joined);
      const inParts = await streams.writeParts!('exclusive', 'parts', parts());
      expect(inParts.type, label).toBe('file');
      expect({ ...inParts, path: '' }, label).toEqual({ ...whole, path: '' });
      expect(Buffer.compare(await readFile(fileOf(inParts)), await readFile(fileOf(whole))), label).toBe(0);
      expect(Buffer.compare(Buffer.from(await read(inParts)), Buffer.from(joined)), label).toBe(0);
    }
  });

  it('a shared stream in parts lands in shared/; a small one stays inline', async () => {
    const storage = new FsCheckpointStorage(await dirs.make(), jobId('job'), { inlineThresholdBytes: 64 });
    await storage.initialize();
    const streams = storage.streamFactory(checkpointId(2));
    const shared = await streams.writeParts!('shared', 'base', parts());
    expect(fileOf(shared).startsWith(storage.sharedDir)).toBe(true);
    const small = await streams.writeParts!('exclusive', 'small', [patternBytes(10, 1), patternBytes(20, 2)]);
    expect(small.type).toBe('inline');
    expect(await storage.readState(small)).toEqual(joinParts([patternBytes(10, 1), patternBytes(20, 2)]));
  });

  it('a corrupted byte in a file written in parts is a CORRUPT_FILE error naming it', async () => {
    const storage = new FsCheckpointStorage(await dirs.make(), jobId('job'));
    await storage.initialize();
    const h = await storage.streamFactory(checkpointId(1)).writeParts!('exclusive', 'keyed', parts());
    const bytes = await readFile(fileOf(h));
    bytes[4_000_000]! ^= 0xff;
    await writeFile(fileOf(h), bytes);
    const err = await storage.readState(h).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'CORRUPT_FILE', file: fileOf(h) });
  });
});
