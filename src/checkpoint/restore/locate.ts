/**
 * Which snapshot a path a person gave names (`--from`, `weir savepoint inspect`): a checkpoint or
 * savepoint directory, a `_metadata` file, or a job directory (its newest complete checkpoint).
 * The decision is pure over what storage found at the path; reading happens at the edge.
 */
import { StorageError } from '../../core/errors.ts';
import { fsSnapshotReader } from '../../storage/fs-inspect.ts';
import { baseName, METADATA_FILE_NAME, parentDir, parseCheckpointDirName } from '../../storage/paths.ts';
import type { SnapshotPathProbe, SnapshotReader } from '../../storage/storage.ts';
import type { CheckpointMetadata } from '../metadata/metadata.ts';
import { readMetadataAt } from '../metadata/read.ts';

/** What a job directory without a completed checkpoint means for a person resuming from it. */
const NOTHING_TO_RESUME =
  ' (no checkpoint completed yet: a run stopped before its first checkpoint completed, and not itself resumed from one, left nothing to resume: start the job without --from)';

/** The directory holding `_metadata` for the probed path; a path naming no snapshot is MISSING_FILE naming it. */
export function snapshotLocationOf(probe: SnapshotPathProbe): string {
  const p = probe.path;
  if (probe.kind === 'missing') throw new StorageError('MISSING_FILE', p, 'no such checkpoint, savepoint or job directory');
  if (probe.kind === 'file') {
    if (baseName(p) === METADATA_FILE_NAME) return parentDir(p);
    throw new StorageError('MISSING_FILE', p, `not a checkpoint: expected a directory or a ${METADATA_FILE_NAME} file`);
  }
  if (probe.hasMetadata) return p;
  const chks = probe.checkpointDirs;
  const complete = chks.filter((c) => c.hasMetadata);
  if (complete.length > 0) return complete[complete.length - 1]!.location;
  if (chks.length > 0) {
    const dirs = chks.length === 1 ? 'directory has' : 'directories have';
    throw new StorageError('MISSING_FILE', p, `no completed checkpoint: ${chks.length} checkpoint ${dirs} no ${METADATA_FILE_NAME}${NOTHING_TO_RESUME}`);
  }
  if (parseCheckpointDirName(baseName(p)) !== null)
    throw new StorageError('MISSING_FILE', p, `incomplete checkpoint: no ${METADATA_FILE_NAME} in this directory`);
  throw new StorageError('MISSING_FILE', p, `not a checkpoint: no ${METADATA_FILE_NAME} in this directory and no completed chk-<n> in it${NOTHING_TO_RESUME}`);
}

/** The directory holding `_metadata` for a path a person gave (see `snapshotLocationOf`); the file system by default. */
export async function resolveCheckpointLocation(p: string, reader: SnapshotReader = fsSnapshotReader): Promise<string> {
  return snapshotLocationOf(await reader.probe(p));
}

/** Reads and verifies the metadata of the snapshot a path names (see `resolveCheckpointLocation`). */
export async function readCheckpointMetadataAt(p: string, reader: SnapshotReader = fsSnapshotReader): Promise<CheckpointMetadata> {
  return readMetadataAt(reader, await resolveCheckpointLocation(p, reader));
}
