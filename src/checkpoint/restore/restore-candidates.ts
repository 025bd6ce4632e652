/**
 * What a job may restore from, given the path a person passed (`--from`): every complete
 * checkpoint of a job directory, newest first, read lazily so a corrupt newest one can be skipped
 * for an older one, then its lineage (the snapshot its run was restored from, and so on: each
 * resume writes a new job directory); or the one snapshot the path names, read at once (there is
 * nothing to fall back to, and its errors belong at the start).
 */
import type { CheckpointId } from '../../core/ids.ts';
import { baseName, parentDir, parseCheckpointDirName } from '../../storage/paths.ts';
import type { RestoredFrom } from '../../storage/restored-from.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import type { CheckpointDirEntry, SnapshotPathProbe, SnapshotReader } from '../../storage/storage.ts';
import type { CheckpointMetadata } from '../metadata/metadata.ts';
import { readMetadataAt } from '../metadata/read.ts';
import { streamHandlesOf } from '../metadata/walk.ts';
import { StorageError } from '../../core/errors.ts';
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
  /** For a candidate of the lineage: why it is one ("job directory X was restored from it"), to name the choice. */
  readonly via?: string;
}

/** Job directories followed back through their lineage at most (a cycle stops earlier). */
const LINEAGE_DEPTH_MAX = 32;

/** Where to restore from, decided from what is at the path: a job's complete checkpoints (newest first) or one snapshot. */
export type RestoreSources =
  | { readonly kind: 'job'; readonly checkpoints: readonly CheckpointDirEntry[] }
  | { readonly kind: 'snapshot'; readonly location: string };

/**
 * Pure: a directory without `_metadata` but with complete chk-<n> inside, or with a record of what
 * its run was restored from, is a job; anything else names one snapshot (or fails). A run restored
 * from snapshot n numbers its checkpoints from n + 1, so where the directory records its run's
 * origin, a checkpoint numbered n or lower was left there by an earlier run (a directory used
 * again): restoring it would go back behind the snapshot the run started from.
 */
export function restoreSourcesOf(probe: SnapshotPathProbe, restoredFrom: RestoredFrom | null = null): RestoreSources {
  if (probe.kind === 'dir' && !probe.hasMetadata) {
    const complete = probe.checkpointDirs.filter((c) => c.hasMetadata && (restoredFrom === null || c.checkpointId > restoredFrom.checkpointId));
    if (complete.length > 0 || restoredFrom !== null) return { kind: 'job', checkpoints: complete.reverse() };
  }
  return { kind: 'snapshot', location: snapshotLocationOf(probe) };
}

/**
 * Restore candidates for path `p`, newest first. A path that names no snapshot, or a single
 * snapshot whose metadata does not verify, is a StorageError naming it.
 */
export async function restoreCandidates(reader: SnapshotReader, p: string): Promise<RestoreCandidate[]> {
  const probe = await reader.probe(p);
  const restoredFrom = probe.kind === 'dir' && !probe.hasMetadata ? await reader.readRestoredFrom(probe.path) : null;
  const sources = restoreSourcesOf(probe, restoredFrom);
  if (sources.kind === 'job') {
    const own: RestoreCandidate[] = sources.checkpoints.map((c) => ({
      checkpointId: c.checkpointId,
      location: c.location,
      load: () => readMetadataAt(reader, c.location, c.checkpointId),
    }));
    return [...own, ...(await lineageCandidates(reader, probe.path, restoredFrom))];
  }
  const metadata = await readMetadataAt(reader, sources.location);
  await checkFilesOf(reader, metadata, sources.location);
  return [{ checkpointId: metadata.checkpointId, location: sources.location, load: async () => metadata }];
}

/**
 * The lineage of job directory `jobDir`, nearest first: the snapshot its run was restored from,
 * then, when that is a checkpoint of another job directory, what that directory's run was restored
 * from, and so on. A corrupt record is a StorageError naming it.
 */
async function lineageCandidates(reader: SnapshotReader, jobDir: string, first: RestoredFrom | null): Promise<RestoreCandidate[]> {
  const out: RestoreCandidate[] = [];
  const seen = new Set<string>([jobDir]);
  let dir = jobDir;
  let r = first;
  while (r !== null && out.length < LINEAGE_DEPTH_MAX) {
    const { location, checkpointId, kind } = r;
    const expectedId = kind === 'checkpoint' && parseCheckpointDirName(baseName(location)) !== null ? checkpointId : null;
    out.push({ checkpointId, location, via: `job directory ${dir} was restored from it`, load: () => readMetadataAt(reader, location, expectedId) });
    if (expectedId === null) break;
    const next = parentDir(location);
    if (seen.has(next)) break;
    seen.add(next);
    dir = next;
    r = await reader.readRestoredFrom(next);
  }
  return out;
}

/** One handle a file: the whole file, or of a file shared by ranges the range that ends last (its header says whether the file holds it). */
function filesToCheck(metadata: CheckpointMetadata): Array<StreamStateHandle & { type: 'file' | 'range' }> {
  const byPath = new Map<string, StreamStateHandle & { type: 'file' | 'range' }>();
  for (const h of streamHandlesOf(metadata)) {
    if (h.type === 'inline') continue;
    const seen = byPath.get(h.path);
    if (seen === undefined || (h.type === 'range' && seen.type === 'range' && h.offset + h.length > seen.offset + seen.length)) byPath.set(h.path, h);
  }
  return [...byPath.values()];
}

/**
 * Checks every state file of the one snapshot a path names before anything starts (header, size,
 * checksum field): with nothing to fall back to, a truncated or missing file is an error at the
 * start naming the file and the snapshot, as a bad `_metadata` is, not a failed restore later.
 */
async function checkFilesOf(reader: SnapshotReader, metadata: CheckpointMetadata, location: string): Promise<void> {
  for (const h of filesToCheck(metadata)) {
    try {
      await reader.checkStateFile(h);
    } catch (err) {
      if (!(err instanceof StorageError)) throw err;
      const what = err.message.startsWith(`${err.file}: `) ? err.message.slice(err.file.length + 2) : err.message;
      throw new StorageError(
        err.code,
        err.file,
        `${what} (a state file of ${metadata.kind} ${metadata.checkpointId} at ${location}, which cannot be restored)`,
        {
          cause: err,
        },
      );
    }
  }
}

/**
 * Candidates for checkpoints an HA store published, newest first, each read only when it is
 * tried: a takeover whose newest published checkpoint is corrupt or missing at rest falls back to
 * the one published before it (the job master skips a candidate that does not verify, and the
 * sink-aware rule judges the choice), instead of failing at the start as a single `--from` does.
 */
export function publishedCandidates(
  reader: SnapshotReader,
  published: readonly { readonly checkpointId: number; readonly location: string }[],
): RestoreCandidate[] {
  return published.map((p) => ({
    checkpointId: p.checkpointId as CheckpointId,
    location: p.location,
    load: () => readMetadataAt(reader, p.location, p.checkpointId as CheckpointId),
  }));
}
