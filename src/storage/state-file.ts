/**
 * State files: a state stream in the common envelope, and the checks that a stream read back is
 * the one its handle recorded (same checksum, same size). Shared by every CheckpointStorage.
 */
import { assert } from '../core/assert.ts';
import { StorageError } from '../core/errors.ts';
import { checksumOf, decodeEnvelope, decodeEnvelopeHeader, encodeEnvelope, ENVELOPE_HEADER_BYTES, envelopeHeader, hex32 } from './file-format.ts';
import type { FileRangeHandle, StreamStateHandle } from './handles.ts';
import { rangeLabel } from './handles.ts';

export const STATE_FORMAT_VERSION = 1;
/** State smaller than this is kept inline in `_metadata` unless a storage is told otherwise. */
export const DEFAULT_INLINE_THRESHOLD_BYTES = 1024;
const SUPPORTED_STATE_VERSIONS: readonly number[] = [1];

/** The name used in errors about inline state, which has no file of its own. */
export const INLINE_STATE_LABEL = '<inline state in _metadata>';

export function encodeStateFile(data: Uint8Array): Uint8Array {
  return encodeEnvelope('state', STATE_FORMAT_VERSION, data);
}

/** The envelope header of a state file whose body (written after it, in parts) has this checksum and size. */
export function stateFileHeader(checksum: number, bodyBytes: number): Uint8Array {
  return envelopeHeader('state', STATE_FORMAT_VERSION, checksum, bodyBytes);
}

/** A file handle for a state file just written with `encodeStateFile(data)`. */
export function fileHandleFor(path: string, data: Uint8Array): StreamStateHandle {
  return { type: 'file', path, size: data.byteLength, checksum: checksumOf(data) };
}

/** An inline handle; the bytes are copied so later changes by the caller cannot alter the snapshot. */
export function inlineHandleFor(data: Uint8Array): StreamStateHandle {
  const copy = Uint8Array.from(data);
  return { type: 'inline', data: copy, checksum: checksumOf(copy) };
}

/** Verifies the envelope of a state file and that it is the file `handle` refers to; returns the body. */
export function decodeStateFile(bytes: Uint8Array, handle: StreamStateHandle & { type: 'file' }): Uint8Array {
  const { body, checksum } = decodeEnvelope('state', bytes, handle.path, SUPPORTED_STATE_VERSIONS);
  checkRecorded(handle, checksum, body.byteLength);
  return body;
}

/**
 * The check of a state file that reads only its header (`head`, its first bytes) and its size on
 * disk: magic, version, length, and the checksum and size `handle` recorded. What a restore checks
 * up front; the body's bytes are checked against the checksum when the restore reads them.
 */
export function checkStateFileHeader(head: Uint8Array, fileBytes: number, handle: StreamStateHandle & { type: 'file' | 'range' }): void {
  if (handle.type === 'range') {
    checkRangeHeader(head, fileBytes, handle);
    return;
  }
  const { checksum, bodyBytes } = decodeEnvelopeHeader('state', head, fileBytes, handle.path, SUPPORTED_STATE_VERSIONS);
  checkRecorded(handle, checksum, bodyBytes);
}

function checkRecorded(handle: StreamStateHandle & { type: 'file' }, checksum: number, bodyBytes: number): void {
  if (checksum !== handle.checksum >>> 0) {
    throw new StorageError(
      'CORRUPT_FILE',
      handle.path,
      `checksum mismatch: file has ${hex32(checksum)}, checkpoint metadata expects ${hex32(handle.checksum)}`,
    );
  }
  if (bodyBytes !== handle.size) {
    throw new StorageError('CORRUPT_FILE', handle.path, `size mismatch: file holds ${bodyBytes} bytes, checkpoint metadata expects ${handle.size}`);
  }
}

/** The handle of the body bytes [offset, offset + data.length) of the state file `path`, whose bytes there are `data`. */
export function rangeHandleFor(path: string, offset: number, data: Uint8Array): FileRangeHandle {
  return { type: 'range', path, offset, length: data.byteLength, checksum: checksumOf(data) };
}

/** Where a range's bytes lie in its file (after the envelope header): the first byte and one past the last. */
export function rangeFileBytes(handle: FileRangeHandle): { readonly start: number; readonly end: number } {
  return { start: ENVELOPE_HEADER_BYTES + handle.offset, end: ENVELOPE_HEADER_BYTES + handle.offset + handle.length };
}

/**
 * Verifies a range read from a state file: `head` is the file's first bytes (its envelope header),
 * `fileBytes` its size, `bytes` what was read at the range. A file too short for the range (torn)
 * or bytes that do not match the range's checksum are CORRUPT_FILE naming the file and the range.
 */
export function verifyStateRange(head: Uint8Array, fileBytes: number, bytes: Uint8Array, handle: FileRangeHandle): Uint8Array {
  checkRangeHeader(head, fileBytes, handle);
  const range = rangeLabel(handle);
  if (bytes.byteLength !== handle.length) {
    throw new StorageError('CORRUPT_FILE', handle.path, `${range}: read ${bytes.byteLength} bytes of the range`);
  }
  const actual = checksumOf(bytes);
  if (actual !== handle.checksum >>> 0) {
    throw new StorageError(
      'CORRUPT_FILE',
      handle.path,
      `${range}: checksum mismatch: range has ${hex32(actual)}, checkpoint metadata expects ${hex32(handle.checksum)}`,
    );
  }
  return bytes;
}

/** The file's header (`head`, of a file of `fileBytes`) is a state file's, and its body holds the range; errors name the file and the range. */
function checkRangeHeader(head: Uint8Array, fileBytes: number, handle: FileRangeHandle): void {
  const range = rangeLabel(handle);
  let bodyBytes: number;
  try {
    bodyBytes = decodeEnvelopeHeader('state', head, fileBytes, handle.path, SUPPORTED_STATE_VERSIONS).bodyBytes;
  } catch (err) {
    // A torn or foreign file: named with the range that was to be read from it.
    if (!(err instanceof StorageError)) throw err;
    throw new StorageError(err.code, handle.path, `${range}: ${err.message.slice(handle.path.length + 2)}`, { cause: err });
  }
  if (handle.offset + handle.length > bodyBytes) {
    throw new StorageError('CORRUPT_FILE', handle.path, `${range}: the range ends past the file's body, which holds ${bodyBytes} bytes`);
  }
}

/** A range of a state file held whole in memory (see `verifyStateRange`); returns a copy of its bytes. */
export function sliceStateRange(file: Uint8Array, handle: FileRangeHandle): Uint8Array {
  const { start, end } = rangeFileBytes(handle);
  return verifyStateRange(
    file.subarray(0, ENVELOPE_HEADER_BYTES),
    file.byteLength,
    Uint8Array.from(file.subarray(start, Math.min(end, file.byteLength))),
    handle,
  );
}

/** Verifies inline state against its checksum; returns a copy of its bytes. */
export function verifyInline(handle: StreamStateHandle & { type: 'inline' }): Uint8Array {
  assert(handle.data instanceof Uint8Array, 'inline handle without bytes');
  const actual = checksumOf(handle.data);
  if (actual !== handle.checksum >>> 0) {
    throw new StorageError('CORRUPT_FILE', INLINE_STATE_LABEL, `checksum mismatch: data has ${hex32(actual)}, handle expects ${hex32(handle.checksum)}`);
  }
  // A copy, as a file read would give: the caller must not be able to alter the handle's bytes.
  return Uint8Array.from(handle.data);
}

/**
 * The default source of unique file-name suffixes: a counter. Names are then deterministic; a name
 * left over from an earlier run is skipped because files are created exclusively (EEXIST -> next).
 */
export function counterSuffixes(): () => string {
  let next = 0;
  return () => (next++).toString(36);
}
