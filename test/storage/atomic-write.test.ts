import { readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/core/errors.ts';
import { BLOCKING_WRITE_BYTES_MAX, errnoCode, fsyncDir, writeFileAtomic, writeFileDurable } from '../../src/storage/atomic-write.ts';
import { bytesOf, tempDirs } from './fixtures.ts';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describe('durable and atomic writes', () => {
  it('writeFileAtomic puts the content in place and leaves no temporary file', async () => {
    const dir = await dirs.make();
    const file = path.join(dir, '_metadata');
    await writeFileAtomic(file, bytesOf('first'), 'a');
    await writeFileAtomic(file, bytesOf('second'), 'b');
    expect(await readFile(file, 'utf8')).toBe('second');
    expect(await readdir(dir)).toEqual(['_metadata']);
  });

  it('writeFileAtomic fails naming the file when the directory is missing', async () => {
    const dir = await dirs.make();
    const file = path.join(dir, 'nope', '_metadata');
    const err = await writeFileAtomic(file, bytesOf('x'), 'a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('MISSING_FILE');
    expect((err as StorageError).message).toContain(path.join(dir, 'nope'));
  });

  it('writeFileDurable lets the event loop turn while it fsyncs (and while it writes a large file), keeps every byte and refuses to overwrite', async () => {
    const dir = await dirs.make();
    for (const size of [BLOCKING_WRITE_BYTES_MAX, BLOCKING_WRITE_BYTES_MAX + 1, 3 * 1024 * 1024]) {
      const file = path.join(dir, `state-${size}`);
      const bytes = new Uint8Array(size).map((_, i) => (i * 31 + size) & 0xff);
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      await writeFileDurable(file, bytes, { exclusive: true });
      // Blocking calls would finish within the awaiting turn; an fsync off the thread needs the loop to turn.
      expect(turned, `${size} bytes`).toBe(true);
      expect(Buffer.compare(await readFile(file), Buffer.from(bytes)), `${size} bytes`).toBe(0);
      const again = await writeFileDurable(file, bytes.subarray(1), { exclusive: true }).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(StorageError);
      expect(errnoCode((again as StorageError).cause), `${size} bytes`).toBe('EEXIST');
      expect((again as StorageError).message).toContain(file);
      expect((await readFile(file)).byteLength).toBe(size);
      await writeFileDurable(file, bytes.subarray(7));
      expect((await readFile(file)).byteLength, `${size} bytes, overwritten`).toBe(size - 7);
    }
  });

  it('writeFileDurable refuses to overwrite in exclusive mode', async () => {
    const dir = await dirs.make();
    const file = path.join(dir, 'state-1');
    await writeFile(file, 'old');
    const err = await writeFileDurable(file, bytesOf('new'), { exclusive: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('STORAGE_IO');
    expect((err as StorageError).message).toContain(file);
    expect(await readFile(file, 'utf8')).toBe('old');
    await writeFileDurable(file, bytesOf('new'));
    expect(await readFile(file, 'utf8')).toBe('new');
  });

  it('fsyncDir works on a directory and names a missing one', async () => {
    const dir = await dirs.make();
    await fsyncDir(dir);
    const err = await fsyncDir(path.join(dir, 'missing')).catch((e: unknown) => e);
    expect((err as StorageError).code).toBe('MISSING_FILE');
  });
});
