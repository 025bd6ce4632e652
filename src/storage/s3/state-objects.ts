/**
 * Writing one state object: the state file's envelope and body as Buffers (so a retried request
 * sends the same bytes), one PUT or a multipart upload (`objects.ts`), under a name no other writer
 * picks: task managers on several hosts write into the same checkpoint prefix, and an object store
 * cannot create a key exclusively everywhere, so the suffix is random, not a counter.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { StreamStateHandle } from '../handles.ts';
import { joinPath, stateFileName } from '../paths.ts';
import { stateFileHeader } from '../state-file.ts';
import type { S3Objects } from './objects.ts';

/** A random file-name suffix: 12 base-36 characters, about 62 bits. */
export function randomSuffix(): string {
  return BigInt(`0x${randomBytes(8).toString('hex')}`)
    .toString(36)
    .slice(0, 12)
    .padStart(12, '0');
}

/** Uploads `parts` joined as a new state object below `dir`; returns its handle. */
export async function writeStateObject(
  objects: S3Objects,
  dir: string,
  nameHint: string,
  parts: readonly Uint8Array[],
): Promise<StreamStateHandle & { type: 'file' }> {
  let checksum = 0;
  let size = 0;
  const body: Buffer[] = [];
  for (const p of parts) {
    checksum = crc32(p, checksum);
    size += p.byteLength;
    body.push(Buffer.from(p.buffer, p.byteOffset, p.byteLength));
  }
  const header = stateFileHeader(checksum >>> 0, size);
  const url = joinPath(dir, stateFileName(nameHint, randomSuffix()));
  await objects.putLarge(url, [Buffer.from(header.buffer, header.byteOffset, header.byteLength), ...body]);
  return { type: 'file', path: url, size, checksum: checksum >>> 0 };
}
