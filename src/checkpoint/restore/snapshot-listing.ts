/**
 * Describing the snapshots on the file system without a job running, for `weir checkpoints`: the
 * storage finds the snapshot directories by name; this reads each `_metadata`, and a metadata
 * problem becomes status 'corrupt' in the listing, not an exception.
 */
import { StorageError, errorMessage } from '../../core/errors.ts';
import type { CheckpointId } from '../../core/ids.ts';
import { findSnapshotDirs, type SnapshotDirEntry } from '../../storage/fs-inspect.ts';
import { FS_SNAPSHOT_TOOLS, type SnapshotTools } from '../../storage/snapshot-tools.ts';
import type { SnapshotReader } from '../../storage/storage.ts';
import type { CheckpointMetadata, CheckpointSummary, SnapshotKind } from '../metadata/metadata.ts';
import { readMetadataAt } from '../metadata/read.ts';
import { snapshotSizeBytes } from './checkpoint-listing.ts';

/** A snapshot directory found on disk, whatever its state. */
export interface StoredSnapshotListing {
  /** From the job directory's name, or from the metadata for a savepoint; null when unknown. */
  readonly jobId: string | null;
  readonly checkpointId: CheckpointId;
  /** Absolute path of the chk-<n> or savepoint directory. */
  readonly location: string;
  /** From the metadata when it reads; otherwise from the directory's name. */
  readonly kind: SnapshotKind;
  /** When the checkpoint was triggered; null unless the metadata reads. */
  readonly timestampMs: number | null;
  /** See `snapshotSizeBytes`. */
  readonly sizeBytes: number;
  /** 'incomplete': no `_metadata` (still being written, or abandoned); 'corrupt': it does not verify. */
  readonly status: 'complete' | 'incomplete' | 'corrupt';
  readonly error?: string;
  /** Type and byte figures recorded in the metadata, when it has them. */
  readonly summary?: CheckpointSummary;
  /** The kinds of its keyed state handles (`key-groups`, `incremental-key-groups`, `changelog`), when the metadata reads. */
  readonly handleKinds?: readonly string[];
}

/** The distinct keyed handle kinds of a snapshot, sorted. */
export function keyedHandleKindsOf(meta: CheckpointMetadata): string[] {
  return [...new Set(meta.operators.flatMap((op) => op.subtasks.flatMap((st) => st.keyed.map((h) => h.type))))].sort();
}

/** Describes one snapshot directory; a checkpoint's metadata must be for the id in its name. */
export async function describeSnapshot(reader: SnapshotReader, entry: SnapshotDirEntry): Promise<StoredSnapshotListing> {
  const { jobId, checkpointId, location, kind } = entry;
  if (!entry.hasMetadata) {
    return { jobId, checkpointId, location, kind, timestampMs: null, sizeBytes: await reader.dirSizeBytes(location), status: 'incomplete' };
  }
  try {
    const meta = await readMetadataAt(reader, location, kind === 'checkpoint' ? checkpointId : null);
    return {
      jobId: jobId ?? meta.jobId,
      checkpointId: meta.checkpointId,
      location,
      kind: meta.kind,
      timestampMs: meta.timestampMs,
      sizeBytes: await snapshotSizeBytes(reader, location, meta),
      status: 'complete',
      ...(meta.summary ? { summary: meta.summary } : {}),
      handleKinds: keyedHandleKindsOf(meta),
    };
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    const sizeBytes = await reader.dirSizeBytes(location);
    return { jobId, checkpointId, location, kind, timestampMs: null, sizeBytes, status: 'corrupt', error: errorMessage(err) };
  }
}

/**
 * Every snapshot under `dir` (see `findSnapshotDirs` for what `dir` may be), on the file system
 * unless another storage's `tools` are given, sorted by job, then id.
 */
export async function listCheckpointsIn(dir: string, tools: SnapshotTools = FS_SNAPSHOT_TOOLS): Promise<StoredSnapshotListing[]> {
  const out: StoredSnapshotListing[] = [];
  for (const entry of await findSnapshotDirs(dir, tools.lister)) out.push(await describeSnapshot(tools.reader, entry));
  return out.sort(compareListings);
}

function compareListings(a: StoredSnapshotListing, b: StoredSnapshotListing): number {
  const ja = a.jobId ?? '';
  const jb = b.jobId ?? '';
  if (ja !== jb) return ja < jb ? -1 : 1;
  if (a.checkpointId !== b.checkpointId) return a.checkpointId - b.checkpointId;
  return a.location < b.location ? -1 : a.location > b.location ? 1 : 0;
}
