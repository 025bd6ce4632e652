/**
 * The completed checkpoints of one job's storage, decoded: storage lists its chk-<n> directories
 * as bytes and names; this reads each `_metadata` and checks it belongs to its directory.
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointStorage, SnapshotReader } from '../../storage/storage.ts';
import type { CheckpointMetadata } from '../metadata/metadata.ts';
import { readMetadataAt } from '../metadata/read.ts';
import { bytesReferencedOutside } from '../metadata/walk.ts';

/** A completed checkpoint as found in storage. */
export interface CheckpointListing {
  readonly checkpointId: CheckpointId;
  /** Absolute path (or memory key) of the directory holding `_metadata`. */
  readonly location: string;
  readonly timestampMs: number;
  /** See `snapshotSizeBytes`. */
  readonly sizeBytes: number;
  readonly kind: 'checkpoint' | 'savepoint';
}

/** A completed checkpoint of the job and its decoded metadata. */
export interface StoredCheckpoint {
  readonly checkpointId: CheckpointId;
  readonly location: string;
  readonly metadata: CheckpointMetadata;
}

/**
 * Bytes a snapshot occupies: the files inside its directory (state files and `_metadata`, which
 * holds the inline state) plus the files it references outside it (shared files, counted at their
 * body size from the handles, once each). Shared files are also counted by every other checkpoint
 * referencing them, so sizes of several checkpoints do not add up to the disk usage.
 */
export async function snapshotSizeBytes(reader: SnapshotReader, dir: string, meta: CheckpointMetadata | null): Promise<number> {
  const inside = await reader.dirSizeBytes(dir);
  return meta === null ? inside : inside + bytesReferencedOutside(meta, dir);
}

/** Complete checkpoints of the job with their metadata, ascending by id; a `_metadata` that does not verify is an error, not skipped. */
export async function readCompletedCheckpoints(storage: CheckpointStorage): Promise<StoredCheckpoint[]> {
  const out: StoredCheckpoint[] = [];
  for (const dir of await storage.listCheckpointDirs()) {
    if (!dir.hasMetadata) continue;
    out.push({ checkpointId: dir.checkpointId, location: dir.location, metadata: await readMetadataAt(storage, dir.location, dir.checkpointId) });
  }
  return out;
}

/** Complete checkpoints of the job, ascending by id, with time, kind and size (see `readCompletedCheckpoints`). */
export async function listCompletedCheckpoints(storage: CheckpointStorage): Promise<CheckpointListing[]> {
  const out: CheckpointListing[] = [];
  for (const { checkpointId, location, metadata } of await readCompletedCheckpoints(storage)) {
    const sizeBytes = await snapshotSizeBytes(storage, location, metadata);
    out.push({ checkpointId, location, timestampMs: metadata.timestampMs, sizeBytes, kind: metadata.kind });
  }
  return out;
}
