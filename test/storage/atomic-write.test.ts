import { readdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/core/errors.ts';
import { fsyncDir, writeFileAtomic, writeFileDurable } from '../../src/storage/atomic-write.ts';
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
