/**
 * Committing a checkpoint's or a savepoint's metadata: encode it with file paths relative to the
 * directory `_metadata` goes into, check that the bytes read back (check data before writing),
 * then let storage write them atomically. A savepoint must be self-contained and relocatable, so
 * every file its metadata refers to must lie inside its own directory.
 */
import { assert } from '../../core/assert.ts';
import { isInside, metadataPath } from '../../storage/paths.ts';
import type { SavepointTarget } from '../../storage/savepoint-target.ts';
import type { CheckpointStorage } from '../../storage/storage.ts';
import type { CheckpointMetadata } from './metadata.ts';
import { deserializeMetadata, serializeMetadata } from './serializer.ts';
import { filePathsOf } from './walk.ts';

/** The bytes of `_metadata` for `meta` written into `dir`, checked to read back. */
export function encodeMetadataFor(meta: CheckpointMetadata, dir: string): Uint8Array {
  const bytes = serializeMetadata(meta, dir);
  deserializeMetadata(bytes, metadataPath(dir));
  return bytes;
}

/**
 * The bytes of a savepoint's `_metadata` written into `dir`; asserts that every file it refers to
 * lies inside `dir` (the savepoint writers put every state file there).
 */
export function encodeSavepointMetadataFor(meta: CheckpointMetadata, dir: string): Uint8Array {
  const bytes = serializeMetadata(meta, dir);
  const check = deserializeMetadata(bytes, metadataPath(dir));
  for (const p of filePathsOf(check)) {
    assert(isInside(dir, p), () => `savepoint would reference ${p} outside ${dir}`);
  }
  return bytes;
}

/** Writes a checkpoint's metadata into the job's storage; resolves with the checkpoint's location. */
export async function commitCheckpointMetadata(storage: CheckpointStorage, meta: CheckpointMetadata): Promise<string> {
  assert(meta.jobId === storage.jobId, () => `metadata of job ${meta.jobId} committed to storage of job ${storage.jobId}`);
  const bytes = encodeMetadataFor(meta, storage.checkpointLocation(meta.checkpointId));
  return storage.commitMetadata(meta.checkpointId, bytes);
}

/** Writes a savepoint's metadata into its own directory; resolves with that location. */
export async function commitSavepointMetadata(target: SavepointTarget, meta: CheckpointMetadata): Promise<string> {
  return target.commitMetadata(encodeSavepointMetadataFor(meta, target.location));
}
