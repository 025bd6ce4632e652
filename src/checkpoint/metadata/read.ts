/**
 * Reading a snapshot's metadata through a SnapshotReader: storage hands over the bytes of
 * `_metadata`, this decodes and checks them. Any problem is a StorageError naming the file.
 */
import { StorageError } from '../../core/errors.ts';
import type { CheckpointId } from '../../core/ids.ts';
import { metadataPath } from '../../storage/paths.ts';
import type { SnapshotReader } from '../../storage/storage.ts';
import type { CheckpointMetadata } from './metadata.ts';
import { deserializeMetadata } from './serializer.ts';

/**
 * Decodes the bytes of `<location>/_metadata`. With `expectedId` (the id in a `chk-<n>` name), the
 * metadata must be for that checkpoint: a directory renamed or copied over another is corrupt.
 */
export function decodeMetadataAt(bytes: Uint8Array, location: string, expectedId: CheckpointId | null = null): CheckpointMetadata {
  const file = metadataPath(location);
  const meta = deserializeMetadata(bytes, file);
  if (expectedId !== null && meta.checkpointId !== expectedId) {
    throw new StorageError('CORRUPT_FILE', file, `metadata is for checkpoint ${meta.checkpointId} but its directory is chk-${expectedId}`);
  }
  return meta;
}

/** Reads, verifies and decodes the metadata of the snapshot at `location` (see `decodeMetadataAt`). */
export async function readMetadataAt(reader: SnapshotReader, location: string, expectedId: CheckpointId | null = null): Promise<CheckpointMetadata> {
  return decodeMetadataAt(await reader.readMetadataBytes(location), location, expectedId);
}
