/**
 * What a job may restore from, given the path a person passed (`--from`): every complete
 * checkpoint of a job directory, newest first, read lazily so a corrupt newest one can be skipped
 * for an older one; or the one snapshot the path names, read at once (there is nothing to fall
 * back to, and its errors belong at the start).
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointDirEntry, SnapshotPathProbe, SnapshotReader } from '../../storage/storage.ts';
import type { CheckpointMetadata } from '../metadata/metadata.ts';
import { readMetadataAt } from '../metadata/read.ts';
import { snapshotLocationOf } from './locate.ts';

/**
 * A snapshot a job may restore from. Its metadata is read only when needed, so a candidate whose
 * `_metadata` does not verify is skipped in favour of an older one.
 */
export interface RestoreCandidate {
  /** From the directory name (a checkpoint of a job directory) or from the metadata. */
  readonly checkpointId: CheckpointId;
  readonly location: string;
  /** Reads and verifies the metadata; a StorageError names the file when it does not verify. */
  load(): Promise<CheckpointMetadata>;
}

/** Where to restore from, decided from what is at the path: a job's complete checkpoints (newest first) or one snapshot. */
export type RestoreSources =
  | { readonly kind: 'job'; readonly checkpoints: readonly CheckpointDirEntry[] }
  | { readonly kind: 'snapshot'; readonly location: string };

/** Pure: a directory without `_metadata` but with complete chk-<n> inside is a job; anything else names one snapshot (or fails). */
export function restoreSourcesOf(probe: SnapshotPathProbe): RestoreSources {
  if (probe.kind === 'dir' && !probe.hasMetadata) {
    const complete = probe.checkpointDirs.filter((c) => c.hasMetadata);
    if (complete.length > 0) return { kind: 'job', checkpoints: complete.reverse() };
  }
  return { kind: 'snapshot', location: snapshotLocationOf(probe) };
}

/**
 * Restore candidates for path `p`, newest first. A path that names no snapshot, or a single
 * snapshot whose metadata does not verify, is a StorageError naming it.
 */
export async function restoreCandidates(reader: SnapshotReader, p: string): Promise<RestoreCandidate[]> {
  const sources = restoreSourcesOf(await reader.probe(p));
  if (sources.kind === 'job') {
    return sources.checkpoints.map((c) => ({
      checkpointId: c.checkpointId,
      location: c.location,
      load: () => readMetadataAt(reader, c.location, c.checkpointId),
    }));
  }
  const metadata = await readMetadataAt(reader, sources.location);
  return [{ checkpointId: metadata.checkpointId, location: sources.location, load: async () => metadata }];
}
