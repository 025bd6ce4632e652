/**
 * Framing of the state streams the heap backends write: a 4-byte header (3-byte magic naming the
 * stream kind, 1-byte format version) followed by msgpack sections. A new layout gets a new
 * version number and a new reader; old readers are never edited.
 */
import { StorageError } from '../../core/errors.ts';
import { rangeLabel, type StreamStateHandle } from '../../storage/handles.ts';

export type StateStreamKind = 'keyed' | 'operator';

export const STREAM_HEADER_BYTES = 4;
export const KEYED_STREAM_VERSION = 1;
export const OPERATOR_STREAM_VERSION = 1;

const MAGIC: Record<StateStreamKind, readonly [number, number, number]> = {
  keyed: [0x57, 0x4b, 0x53], // "WKS"
  operator: [0x57, 0x4f, 0x53], // "WOS"
};

/** How errors name a stream: its path, or that it was kept inline in the metadata. */
export function streamName(handle: StreamStateHandle): string {
  if (handle.type === 'range') return `${handle.path} (${rangeLabel(handle)})`;
  return handle.type === 'file' ? handle.path : `inline state (${handle.data.byteLength} bytes)`;
}

/**
 * The stream `assembleStream` gives, as parts not joined (the header, then the sections): what a
 * large snapshot hands to `CheckpointStreamFactory.writeParts`. Returns where each section starts.
 */
export function streamParts(kind: StateStreamKind, version: number, sections: readonly Uint8Array[]): { parts: Uint8Array[]; starts: number[] } {
  const header = new Uint8Array(STREAM_HEADER_BYTES);
  header.set(MAGIC[kind], 0);
  header[3] = version;
  const starts: number[] = [];
  let offset = STREAM_HEADER_BYTES;
  for (const s of sections) {
    starts.push(offset);
    offset += s.byteLength;
  }
  return { parts: [header, ...sections], starts };
}

/** Joins the header and the sections into one stream; returns where each section starts. */
export function assembleStream(kind: StateStreamKind, version: number, sections: readonly Uint8Array[]): { bytes: Uint8Array; starts: number[] } {
  let total = STREAM_HEADER_BYTES;
  for (const s of sections) total += s.byteLength;
  const bytes = new Uint8Array(total);
  bytes.set(MAGIC[kind], 0);
  bytes[3] = version;
  const starts: number[] = [];
  let offset = STREAM_HEADER_BYTES;
  for (const s of sections) {
    starts.push(offset);
    bytes.set(s, offset);
    offset += s.byteLength;
  }
  return { bytes, starts };
}

/** Checks the header; returns the format version. Throws a StorageError naming the stream. */
export function readStreamHeader(bytes: Uint8Array, kind: StateStreamKind, supported: readonly number[], name: string): number {
  const magic = MAGIC[kind];
  if (bytes.byteLength < STREAM_HEADER_BYTES || bytes[0] !== magic[0] || bytes[1] !== magic[1] || bytes[2] !== magic[2]) {
    throw new StorageError('CORRUPT_FILE', name, `not a ${kind} state stream (bad header)`);
  }
  const version = bytes[3]!;
  if (!supported.includes(version)) {
    throw new StorageError('UNSUPPORTED_VERSION', name, `${kind} state stream format version ${version} is not supported (supported: ${supported.join(', ')})`);
  }
  return version;
}

/** The bytes of one section, checked to lie inside the stream. */
export function sectionBytes(bytes: Uint8Array, offset: number, length: number, name: string): Uint8Array {
  if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < STREAM_HEADER_BYTES || length <= 0 || offset + length > bytes.byteLength) {
    throw new StorageError('CORRUPT_FILE', name, `section [${offset}, +${length}) lies outside the ${bytes.byteLength}-byte stream`);
  }
  return bytes.subarray(offset, offset + length);
}
