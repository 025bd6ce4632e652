/**
 * Durable file writes. State files are written whole and fsynced (`writeFileDurable`); `_metadata`
 * goes through a temporary name, fsync, rename and directory fsync (`writeFileAtomic`), so a crash
 * leaves either no `_metadata` or a complete one (Invariant 3).
 */
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
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
 * Files up to this size are opened, written and closed with blocking calls and fsynced with an
 * asynchronous one; larger ones use asynchronous calls throughout. In a busy process every awaited
 * fs call costs a whole turn of the event loop (all runnable subtasks' steps), so five awaited calls
 * made small checkpoints take 100+ ms, while a blocking write of a few KB into the page cache takes
 * well under a millisecond. An fsync is another matter: it waits for the file system's journal, so
 * with a large file being written beside it, the fsync of a 65 KB changelog upload held the thread
 * 50-140 ms (BENCHMARKS.md, changelog); it always runs off the thread.
 */
export const BLOCKING_WRITE_BYTES_MAX = 256 * 1024;

const fsyncOffThread = promisify(fs.fsync);

/**
 * Writes `bytes` to `file` and fsyncs it. With `exclusive`, fails with EEXIST (a StorageError whose
 * cause has code 'EEXIST') rather than overwrite an existing file.
 */
export async function writeFileDurable(file: string, bytes: Uint8Array, options: { exclusive?: boolean } = {}): Promise<void> {
  const flags = options.exclusive === true ? 'wx' : 'w';
  if (bytes.byteLength > BLOCKING_WRITE_BYTES_MAX) return writeDurableAsync(file, flags, [bytes]);
  let fd: number;
  try {
    fd = fs.openSync(file, flags);
  } catch (err) {
    throw storageIoError(file, 'create', err);
  }
  try {
    let written = 0;
    while (written < bytes.byteLength) written += fs.writeSync(fd, bytes, written, bytes.byteLength - written);
    await fsyncOffThread(fd);
  } catch (err) {
    closeQuietly(fd);
    try {
      fs.unlinkSync(file);
    } catch {
      // best effort
    }
    throw storageIoError(file, 'write', err);
  }
  try {
    fs.closeSync(fd);
  } catch (err) {
    throw storageIoError(file, 'close', err);
  }
}

/** Parts go to the file in vectored writes of about this many bytes. */
const PART_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Writes a new file of `headerBytes` bytes of header followed by `parts` in order, and fsyncs it,
 * with asynchronous calls only: a state file of hundreds of MB must not hold the thread its
 * snapshot's async phase shares with the record path. `onPart` sees each part before it goes out
 * (to accumulate a checksum); `header()` is called after the last part and written at offset 0.
 * Like `writeFileDurable` with `exclusive`, it fails with EEXIST rather than overwrite; any other
 * failure removes the file.
 */
export function writeFileDurableParts(
  file: string,
  headerBytes: number,
  parts: readonly Uint8Array[],
  onPart: (part: Uint8Array) => void,
  header: () => Uint8Array,
): Promise<void> {
  return writeDurableAsync(file, 'wx', parts, { bytes: headerBytes, onPart, header });
}

/** `parts` (after `head.bytes` of header written last, when given) into a new file, fsynced, with asynchronous calls only. */
async function writeDurableAsync(
  file: string,
  flags: 'w' | 'wx',
  parts: readonly Uint8Array[],
  head: { readonly bytes: number; readonly onPart: (part: Uint8Array) => void; readonly header: () => Uint8Array } | null = null,
): Promise<void> {
  let fh: FileHandle;
  try {
    fh = await fsp.open(file, flags);
  } catch (err) {
    throw storageIoError(file, 'create', err);
  }
  try {
    let position = head?.bytes ?? 0;
    let batch: Uint8Array[] = [];
    let batchBytes = 0;
    for (const part of parts) {
      head?.onPart(part);
      batch.push(part);
      batchBytes += part.byteLength;
      if (batchBytes < PART_BATCH_BYTES) continue;
      await writeAllAt(fh, batch, position);
      position += batchBytes;
      batch = [];
      batchBytes = 0;
    }
    await writeAllAt(fh, batch, position);
    if (head !== null) {
      const bytes = head.header();
      if (bytes.byteLength !== head.bytes) throw new Error(`header of ${bytes.byteLength} bytes, ${head.bytes} reserved`);
      await writeAllAt(fh, [bytes], 0);
    }
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fsp.unlink(file).catch(() => undefined);
    throw storageIoError(file, 'write', err);
  }
  try {
    await fh.close();
  } catch (err) {
    throw storageIoError(file, 'close', err);
  }
}

/** `buffers` written contiguously from `position`, resuming after short writes. */
async function writeAllAt(fh: FileHandle, buffers: readonly Uint8Array[], position: number): Promise<void> {
  let pending = buffers.filter((b) => b.byteLength > 0);
  let at = position;
  while (pending.length > 0) {
    const { bytesWritten } = await fh.writev(pending, at);
    at += bytesWritten;
    let skip = bytesWritten;
    const rest: Uint8Array[] = [];
    for (const b of pending) {
      if (skip >= b.byteLength) skip -= b.byteLength;
      else {
        rest.push(skip > 0 ? b.subarray(skip) : b);
        skip = 0;
      }
    }
    pending = rest;
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already failing
  }
}

/** Fsyncs a directory so that entries created or renamed in it survive a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch (err) {
    throw storageIoError(dir, 'open directory', err);
  }
  try {
    await fsyncOffThread(fd);
  } catch (err) {
    // Some platforms (Windows, some network file systems) cannot fsync a directory; rename is
    // still atomic there, only its durability across power loss is weaker.
    const code = errnoCode(err);
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EISDIR' && code !== 'ENOTSUP') {
      throw storageIoError(dir, 'fsync directory', err);
    }
  } finally {
    closeQuietly(fd);
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
    fs.renameSync(temp, file);
  } catch (err) {
    await fsp.unlink(temp).catch(() => undefined);
    throw storageIoError(file, 'rename into place', err);
  }
  await fsyncDir(parentDir(file));
}
