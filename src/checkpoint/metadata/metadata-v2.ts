/**
 * Metadata format version 2: version 1's body (see `metadata-v1.ts`) with one more kind of stream
 * handle, a byte range of a shared state file (the changelog's shared log files):
 *
 *   stream = { type: 'file', path, size, checksum } | { type: 'inline', data, checksum }
 *          | { type: 'range', path, offset, length, checksum }
 *
 * `offset` counts from the start of the file's body (after its envelope header); `checksum` is the
 * CRC-32 of the range's bytes. `path` is relative to the directory holding `_metadata`, as in 1.
 * The serializer writes 2 only for a checkpoint that holds a range, so checkpoints without one stay
 * readable by a Weir that knows only 1. Once released, kept forever and never edited.
 */
import { assert } from '../../core/assert.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { relativePath, resolveRelative } from '../../storage/paths.ts';
import type { WireCheck } from '../../storage/wire-check.ts';
import type { CheckpointMetadata } from './metadata.ts';
import { readMetadataBody, readStreamV1, writeMetadataBody, writeStreamV1 } from './metadata-v1.ts';

const U32_MAX = 0xffff_ffff;

export function writeMetadataV2(meta: CheckpointMetadata, metadataDir: string): unknown {
  return writeMetadataBody(meta, (h) => writeStreamV2(h, metadataDir));
}

function writeStreamV2(h: StreamStateHandle, dir: string): unknown {
  if (h.type !== 'range') return writeStreamV1(h, dir);
  assert(Number.isInteger(h.checksum) && h.checksum >= 0 && h.checksum <= U32_MAX, () => `invalid checksum ${h.checksum} of a range of ${h.path}`);
  assert(Number.isSafeInteger(h.offset) && h.offset >= 0, () => `invalid offset ${h.offset} of a range of ${h.path}`);
  assert(Number.isSafeInteger(h.length) && h.length >= 0, () => `invalid length ${h.length} of a range of ${h.path}`);
  return { type: 'range', path: relativePath(dir, h.path), offset: h.offset, length: h.length, checksum: h.checksum };
}

/** Reads a decoded V2 body; file paths are resolved against `metadataDir`. */
export function readMetadataV2(body: unknown, metadataDir: string, file: string): CheckpointMetadata {
  return readMetadataBody(body, file, (c, v, at) => readStreamV2(c, v, at, metadataDir));
}

function readStreamV2(c: WireCheck, v: unknown, at: string, dir: string): StreamStateHandle {
  const o = c.object(v, at);
  if (o.type !== 'range') return readStreamV1(c, v, at, dir);
  const checksum = c.int(o.checksum, `${at}.checksum`, 0, U32_MAX);
  const rel = c.nonEmptyString(o.path, `${at}.path`);
  if (rel.startsWith('/') || rel.includes('\\') || /^[A-Za-z]:/.test(rel)) c.fail(`${at}.path`, 'a relative path');
  return { type: 'range', path: resolveRelative(dir, rel), offset: c.int(o.offset, `${at}.offset`), length: c.int(o.length, `${at}.length`), checksum };
}

/** Whether `meta` holds a stream only format 2 can express. */
export function needsMetadataV2(streams: readonly StreamStateHandle[]): boolean {
  return streams.some((h) => h.type === 'range');
}
