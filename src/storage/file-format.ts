/**
 * The one envelope around every persisted file: magic (which kind of Weir file), format version,
 * crc32 of the body and body length, then the body. Reading checks all four, so a wrong, truncated,
 * corrupted or too-new file is a StorageError naming the file, never a silent wrong answer.
 *
 * Layout (big-endian), fixed forever so that any version can at least be recognised:
 *   0  4 bytes  magic
 *   4  u16      format version of the body
 *   6  u32      crc32 of the body
 *   10 u64      body length in bytes
 *   18 ...      body
 */
import { crc32 } from 'node:zlib';
import { assert } from '../core/assert.ts';
import { StorageError } from '../core/errors.ts';

/** What a persisted file holds; each kind has its own magic so files cannot be mistaken for each other. */
export type FileKind = 'state' | 'metadata' | 'restored-from';

const MAGIC: Readonly<Record<FileKind, string>> = {
  state: 'WRST',
  metadata: 'WRMD',
  'restored-from': 'WRRF',
};

const KIND_LABEL: Readonly<Record<FileKind, string>> = {
  state: 'state',
  metadata: 'checkpoint metadata',
  'restored-from': 'restored-from record',
};

export const ENVELOPE_HEADER_BYTES = 18;
const VERSION_MAX = 0xffff;

/** crc32 of bytes as an unsigned 32-bit number; the checksum recorded in state handles. */
export function checksumOf(bytes: Uint8Array): number {
  return crc32(bytes) >>> 0;
}

/** Wraps `body` in the envelope of `kind` at format `version`. */
export function encodeEnvelope(kind: FileKind, version: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(ENVELOPE_HEADER_BYTES + body.byteLength);
  writeEnvelopeHeader(out, kind, version, checksumOf(body), body.byteLength);
  out.set(body, ENVELOPE_HEADER_BYTES);
  return out;
}

/**
 * The envelope header alone, for a body written in parts after it (`checksum` is the crc32 of the
 * whole body, as `checksumOf` gives it, or as `crc32` accumulates it part by part).
 */
export function envelopeHeader(kind: FileKind, version: number, checksum: number, bodyBytes: number): Uint8Array {
  const out = new Uint8Array(ENVELOPE_HEADER_BYTES);
  writeEnvelopeHeader(out, kind, version, checksum, bodyBytes);
  return out;
}

function writeEnvelopeHeader(out: Uint8Array, kind: FileKind, version: number, checksum: number, bodyBytes: number): void {
  assert(Number.isInteger(version) && version >= 1 && version <= VERSION_MAX, () => `envelope version out of range: ${version}`);
  const view = new DataView(out.buffer, out.byteOffset, ENVELOPE_HEADER_BYTES);
  writeMagic(out, MAGIC[kind]);
  view.setUint16(4, version);
  view.setUint32(6, checksum >>> 0);
  view.setBigUint64(10, BigInt(bodyBytes));
}

/** What `decodeEnvelope` found: the format version and a view of the verified body. */
export interface DecodedEnvelope {
  readonly version: number;
  readonly checksum: number;
  readonly body: Uint8Array;
}

/**
 * Verifies and unwraps a file of `kind`. Checks, in order: magic, format version (before anything
 * else a newer version might lay out differently), length, checksum.
 */
export function decodeEnvelope(kind: FileKind, bytes: Uint8Array, fileNameForErrors: string, supportedVersions: readonly number[]): DecodedEnvelope {
  const file = fileNameForErrors;
  const { version, checksum } = decodeEnvelopeHeader(kind, bytes, bytes.byteLength, file, supportedVersions);
  const body = bytes.subarray(ENVELOPE_HEADER_BYTES);
  const actual = checksumOf(body);
  if (actual !== checksum) {
    throw new StorageError('CORRUPT_FILE', file, `checksum mismatch: header says ${hex32(checksum)}, body has ${hex32(actual)}`);
  }
  return { version, checksum, body };
}

/**
 * Checks what can be checked without the body: magic, format version, and that the file is as long
 * as its header says (`fileBytes`, from the whole file or from its size on disk). `head` is the
 * file's first bytes (at least the header, unless the file is shorter). Returns the header's fields.
 */
export function decodeEnvelopeHeader(
  kind: FileKind,
  head: Uint8Array,
  fileBytes: number,
  file: string,
  supportedVersions: readonly number[],
): { readonly version: number; readonly checksum: number; readonly bodyBytes: number } {
  assert(supportedVersions.length > 0, 'decodeEnvelope needs at least one supported version');
  checkMagic(kind, head, file);
  if (head.byteLength < ENVELOPE_HEADER_BYTES) {
    throw new StorageError('CORRUPT_FILE', file, `truncated: expected at least ${ENVELOPE_HEADER_BYTES} bytes, found ${head.byteLength}`);
  }
  const view = new DataView(head.buffer, head.byteOffset, ENVELOPE_HEADER_BYTES);
  const version = view.getUint16(4);
  checkVersion(version, supportedVersions, file);
  const checksum = view.getUint32(6);
  const bodyLength = view.getBigUint64(10);
  const expected = BigInt(ENVELOPE_HEADER_BYTES) + bodyLength;
  if (expected !== BigInt(fileBytes)) {
    const what = expected > BigInt(fileBytes) ? 'truncated' : 'unexpected trailing bytes';
    throw new StorageError('CORRUPT_FILE', file, `${what}: expected ${expected} bytes, found ${fileBytes}`);
  }
  return { version, checksum, bodyBytes: Number(bodyLength) };
}

function checkMagic(kind: FileKind, bytes: Uint8Array, file: string): void {
  const found = readMagic(bytes);
  if (found === MAGIC[kind]) return;
  const other = (Object.keys(MAGIC) as FileKind[]).find((k) => MAGIC[k] === found);
  const hint = other === undefined ? '' : ` (it is a Weir ${KIND_LABEL[other]} file)`;
  if (bytes.byteLength < 4 && MAGIC[kind].startsWith(found)) {
    throw new StorageError('CORRUPT_FILE', file, `truncated: expected at least ${ENVELOPE_HEADER_BYTES} bytes, found ${bytes.byteLength}`);
  }
  throw new StorageError('CORRUPT_FILE', file, `not a Weir ${KIND_LABEL[kind]} file${hint}`);
}

function checkVersion(version: number, supported: readonly number[], file: string): void {
  if (supported.includes(version)) return;
  const max = Math.max(...supported);
  if (version > max) {
    throw new StorageError('UNSUPPORTED_VERSION', file, `format version ${version} is newer than this Weir supports (max ${max})`);
  }
  throw new StorageError('UNSUPPORTED_VERSION', file, `format version ${version} is not supported (supported: ${supported.join(', ')})`);
}

function readMagic(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < Math.min(4, bytes.byteLength); i++) s += String.fromCharCode(bytes[i]!);
  return s;
}

function writeMagic(out: Uint8Array, magic: string): void {
  for (let i = 0; i < 4; i++) out[i] = magic.charCodeAt(i);
}

/** A checksum as people read it in error messages: `0x` and 8 hex digits. */
export function hex32(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
}
