/**
 * Reading persisted files from the local file system, verified: every failure is a StorageError
 * naming the file (missing, unreadable, corrupt, too new).
 */
import { promises as fsp, type Dirent } from 'node:fs';
import { StorageError } from '../core/errors.ts';
import { crc32 } from 'node:zlib';
import { errnoCode, storageIoError, writeFileDurable, writeFileDurableParts } from './atomic-write.ts';
import { ENVELOPE_HEADER_BYTES } from './file-format.ts';
import { makeDirsSync } from './make-dirs.ts';
import type { FileRangeHandle, StreamStateHandle } from './handles.ts';
import { joinPath, metadataPath, stateFileName } from './paths.ts';
import { checkStateFileHeader, decodeStateFile, rangeFileBytes, stateFileHeader, verifyInline, verifyStateRange } from './state-file.ts';

/** Reads a whole file; a missing file is MISSING_FILE "<what> is missing". */
export async function readFileChecked(file: string, what: string): Promise<Uint8Array> {
  try {
    const buf = await fsp.readFile(file);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') throw new StorageError('MISSING_FILE', file, `${what} is missing`, { cause: err });
    throw storageIoError(file, `read ${what}`, err);
  }
}

/** Reads and verifies one state stream from the file system (or inline bytes). */
export async function readStateFs(handle: StreamStateHandle): Promise<Uint8Array> {
  if (handle.type === 'inline') return verifyInline(handle);
  if (handle.type === 'range') return readStateRangeFs(handle);
  const bytes = await readFileChecked(handle.path, 'state file');
  return decodeStateFile(bytes, handle);
}

/** Reads only a range's bytes and the file's header (see `verifyStateRange`). */
async function readStateRangeFs(handle: FileRangeHandle): Promise<Uint8Array> {
  const { head, fileBytes, bytes } = await readStateFileParts(handle.path, rangeFileBytes(handle));
  return verifyStateRange(head, fileBytes, bytes, handle);
}

/** Checks a state file's header and size on disk against its handle (see `checkStateFileHeader`), without reading its body. */
export async function checkStateFileFs(handle: StreamStateHandle & { type: 'file' | 'range' }): Promise<void> {
  const { head, fileBytes } = await readStateFileParts(handle.path, { start: 0, end: 0 });
  checkStateFileHeader(head, fileBytes, handle);
}

/** A state file's header, its size, and its bytes [start, end) (fewer where the file ends first); a missing file is MISSING_FILE. */
async function readStateFileParts(file: string, range: { start: number; end: number }): Promise<{ head: Uint8Array; fileBytes: number; bytes: Uint8Array }> {
  try {
    const fh = await fsp.open(file, 'r');
    try {
      const fileBytes = (await fh.stat()).size;
      const head = new Uint8Array(Math.min(ENVELOPE_HEADER_BYTES, fileBytes));
      await fh.read(head, 0, head.byteLength, 0);
      const bytes = new Uint8Array(Math.max(0, Math.min(range.end, fileBytes) - range.start));
      if (bytes.byteLength > 0) await fh.read(bytes, 0, bytes.byteLength, range.start);
      return { head, fileBytes, bytes };
    } finally {
      await fh.close();
    }
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') throw new StorageError('MISSING_FILE', file, 'state file is missing', { cause: err });
    throw storageIoError(file, 'read state file', err);
  }
}

/** The bytes of `<location>/_metadata` (not decoded: that is `checkpoint/metadata`'s part). */
export function readMetadataBytesFs(location: string): Promise<Uint8Array> {
  return readFileChecked(metadataPath(location), 'checkpoint metadata');
}

/** Entries of a directory; a missing directory has none. */
export async function listDir(dir: string): Promise<Dirent[]> {
  try {
    return await fsp.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw storageIoError(dir, 'list directory', err);
  }
}

export async function pathKind(p: string): Promise<'file' | 'dir' | 'missing' | 'other'> {
  try {
    const st = await fsp.stat(p);
    return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
  } catch (err) {
    if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return 'missing';
    throw storageIoError(p, 'stat', err);
  }
}

/** Total size of the regular files under `dir`, recursively. */
export async function dirFilesSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await listDir(dir)) {
    const p = joinPath(dir, entry.name);
    if (entry.isDirectory()) {
      total += await dirFilesSize(p);
    } else if (entry.isFile()) {
      try {
        total += (await fsp.stat(p)).size;
      } catch (err) {
        // A file removed while we were listing (a concurrent discard) no longer counts.
        if (errnoCode(err) !== 'ENOENT') throw storageIoError(p, 'stat', err);
      }
    }
  }
  return total;
}

/** Creates a directory and its parents. */
export async function makeDir(dir: string): Promise<void> {
  try {
    makeDirsSync(dir); // sync: see writeFileDurable
  } catch (err) {
    throw storageIoError(dir, 'create directory', err);
  }
}

/** Removes an empty directory; returns false (and leaves it) when it is not empty or missing. */
export async function removeDirIfEmpty(dir: string): Promise<boolean> {
  try {
    await fsp.rmdir(dir);
    return true;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw storageIoError(dir, 'remove directory', err);
  }
}

/** Give up finding a free file name after this many taken ones; something is badly wrong. */
const NAME_ATTEMPTS_MAX = 100_000;

/** Writes `bytes` durably to a new file `<nameHint>-<suffix>` in `dir`, skipping names taken. */
/**
 * Writes a new state file in `dir` whose body is `parts` joined, without joining them (see
 * `writeFileDurableParts`); the file's bytes are those `encodeStateFile` gives for the joined body.
 * Returns the file and the body's checksum and size, for its handle.
 */
export async function writeNewStateFileParts(
  dir: string,
  nameHint: string,
  parts: readonly Uint8Array[],
  nextSuffix: () => string,
): Promise<{ file: string; checksum: number; size: number }> {
  for (let attempt = 0; attempt < NAME_ATTEMPTS_MAX; attempt++) {
    const file = joinPath(dir, stateFileName(nameHint, nextSuffix()));
    let checksum = 0;
    let size = 0;
    const onPart = (part: Uint8Array) => {
      checksum = crc32(part, checksum);
      size += part.byteLength;
    };
    try {
      await writeFileDurableParts(file, ENVELOPE_HEADER_BYTES, parts, onPart, () => stateFileHeader(checksum >>> 0, size));
      return { file, checksum: checksum >>> 0, size };
    } catch (err) {
      if (!(err instanceof StorageError) || errnoCode(err.cause) !== 'EEXIST') throw err;
    }
  }
  throw new StorageError('STORAGE_IO', joinPath(dir, stateFileName(nameHint, 'N')), `no free file name after ${NAME_ATTEMPTS_MAX} attempts`);
}

export async function writeNewFile(dir: string, nameHint: string, bytes: Uint8Array, nextSuffix: () => string): Promise<string> {
  for (let attempt = 0; attempt < NAME_ATTEMPTS_MAX; attempt++) {
    const file = joinPath(dir, stateFileName(nameHint, nextSuffix()));
    try {
      await writeFileDurable(file, bytes, { exclusive: true });
      return file;
    } catch (err) {
      if (!(err instanceof StorageError) || errnoCode(err.cause) !== 'EEXIST') throw err;
    }
  }
  throw new StorageError('STORAGE_IO', joinPath(dir, stateFileName(nameHint, 'N')), `no free file name after ${NAME_ATTEMPTS_MAX} attempts`);
}
