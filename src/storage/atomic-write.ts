/**
 * Durable file writes. State files are written whole and fsynced (`writeFileDurable`); `_metadata`
 * goes through a temporary name, fsync, rename and directory fsync (`writeFileAtomic`), so a crash
 * leaves either no `_metadata` or a complete one (Invariant 3).
 */
import { promises as fsp } from 'node:fs';
import { StorageError } from '../core/errors.ts';
import { parentDir, tempFilePath } from './paths.ts';

/** Maps a Node fs error to a StorageError naming `file`. */
export function storageIoError(file: string, action: string, err: unknown): StorageError {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return new StorageError('MISSING_FILE', file, `${action}: file or directory does not exist`, { cause: err });
  const detail = err instanceof Error ? err.message : String(err);
  return new StorageError('STORAGE_IO', file, `${action} failed: ${detail}`, { cause: err });
}

export function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/**
 * Writes `bytes` to `file` and fsyncs it. With `exclusive`, fails with EEXIST (a StorageError whose
 * cause has code 'EEXIST') rather than overwrite an existing file.
 */
export async function writeFileDurable(file: string, bytes: Uint8Array, options: { exclusive?: boolean } = {}): Promise<void> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, options.exclusive === true ? 'wx' : 'w');
  } catch (err) {
    throw storageIoError(file, 'create', err);
  }
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await fsp.unlink(file).catch(() => undefined);
    throw storageIoError(file, 'write', err);
  }
  try {
    await handle.close();
  } catch (err) {
    throw storageIoError(file, 'close', err);
  }
}

/** Fsyncs a directory so that entries created or renamed in it survive a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(dir, 'r');
  } catch (err) {
    throw storageIoError(dir, 'open directory', err);
  }
  try {
    await handle.sync();
  } catch (err) {
    // Some platforms (Windows, some network file systems) cannot fsync a directory; rename is
    // still atomic there, only its durability across power loss is weaker.
    const code = errnoCode(err);
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EISDIR' && code !== 'ENOTSUP') {
      throw storageIoError(dir, 'fsync directory', err);
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Writes `file` atomically: `<file>.tmp-<tempSuffix>`, fsync, rename onto `file`, fsync the
 * directory. Readers see either the old content (or no file) or all of the new content.
 */
export async function writeFileAtomic(file: string, bytes: Uint8Array, tempSuffix: string): Promise<void> {
  const temp = tempFilePath(file, tempSuffix);
  await writeFileDurable(temp, bytes, { exclusive: true });
  try {
    await fsp.rename(temp, file);
  } catch (err) {
    await fsp.unlink(temp).catch(() => undefined);
    throw storageIoError(file, 'rename into place', err);
  }
  await fsyncDir(parentDir(file));
}
