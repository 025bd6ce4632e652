/**
 * Reading snapshots in S3 by their keys, without decoding anything (what a `_metadata` says is read
 * above, in `checkpoint/restore`): probing a URL a person gave, a checkpoint's `_metadata` bytes,
 * state objects checked by their envelope header, a job's lineage record. A "directory" in a
 * bucket is a key prefix that some object lies below.
 */
import type { CheckpointId } from '../../core/ids.ts';
import { ENVELOPE_HEADER_BYTES } from '../file-format.ts';
import type { StreamStateHandle } from '../handles.ts';
import { baseName, metadataPath, parseCheckpointDirName, restoredFromPath } from '../paths.ts';
import { decodeRestoredFrom, type RestoredFrom } from '../restored-from.ts';
import { checkStateFileHeader, decodeStateFile, rangeFileBytes, verifyInline, verifyStateRange } from '../state-file.ts';
import type { CheckpointDirEntry, SnapshotPathProbe, SnapshotReader } from '../storage.ts';
import type { S3Objects } from './objects.ts';

/** The `chk-<n>` "directories" right below `jobDir`, ascending by id, with whether `_metadata` is in each. */
export async function checkpointDirsS3(objects: S3Objects, jobDir: string): Promise<CheckpointDirEntry[]> {
  const { dirs } = await objects.list(jobDir, { delimiter: true });
  const out: CheckpointDirEntry[] = [];
  for (const location of dirs) {
    const id: CheckpointId | null = parseCheckpointDirName(baseName(location));
    if (id === null) continue;
    out.push({ checkpointId: id, location, hasMetadata: (await objects.head(metadataPath(location))) !== null });
  }
  return out.sort((a, b) => a.checkpointId - b.checkpointId);
}

/** What is at an S3 URL (see SnapshotPathProbe): an object, a prefix with objects below it, or nothing. */
export async function probeS3(objects: S3Objects, url: string): Promise<SnapshotPathProbe> {
  const p = url.replace(/\/+$/, '');
  if ((await objects.head(p)) !== null) return { path: p, kind: 'file', hasMetadata: false, checkpointDirs: [] };
  const { objects: below, dirs } = await objects.list(p, { delimiter: true });
  if (below.length === 0 && dirs.length === 0) return { path: p, kind: 'missing', hasMetadata: false, checkpointDirs: [] };
  const hasMetadata = below.some((o) => o.url === metadataPath(p));
  return { path: p, kind: 'dir', hasMetadata, checkpointDirs: hasMetadata ? [] : await checkpointDirsS3(objects, p) };
}

/** Reads and verifies one state object (or inline bytes). */
export async function readStateS3(objects: S3Objects, handle: StreamStateHandle): Promise<Uint8Array> {
  if (handle.type === 'inline') return verifyInline(handle);
  if (handle.type === 'range') {
    // Two ranged GETs: the envelope header (magic, version, body size) and the range itself.
    const { bytes: head, totalBytes } = await objects.get(handle.path, 'state file', { start: 0, end: ENVELOPE_HEADER_BYTES - 1 });
    const { start, end } = rangeFileBytes(handle);
    const bytes = handle.length === 0 || end > totalBytes ? new Uint8Array(0) : (await objects.get(handle.path, 'state file', { start, end: end - 1 })).bytes;
    return verifyStateRange(head, totalBytes, bytes, handle);
  }
  return decodeStateFile((await objects.get(handle.path, 'state file')).bytes, handle);
}

/** A SnapshotReader over S3 URLs only (`weir checkpoints s3://...`, `weir savepoint inspect s3://...`). */
export function s3SnapshotReader(objects: S3Objects): SnapshotReader {
  return {
    probe: (p) => probeS3(objects, p),
    readMetadataBytes: async (location) => (await objects.get(metadataPath(location), 'checkpoint metadata')).bytes,
    dirSizeBytes: async (location) => (await objects.list(location)).objects.reduce((sum, o) => sum + o.size, 0),
    checkStateFile: async (handle) => {
      const { bytes, totalBytes } = await objects.get(handle.path, 'state file', { start: 0, end: ENVELOPE_HEADER_BYTES - 1 });
      checkStateFileHeader(bytes, totalBytes, handle);
    },
    readRestoredFrom: async (jobDir): Promise<RestoredFrom | null> => {
      const file = restoredFromPath(jobDir);
      if ((await objects.head(file)) === null) return null;
      return decodeRestoredFrom((await objects.get(file, 'restored-from record')).bytes, file);
    },
  };
}
