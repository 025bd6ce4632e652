/**
 * Finding and describing snapshots on the file system without a job running: for restore (`--from
 * <path>`), the CLI's listing, and cleanup of incomplete checkpoints on start.
 */
import * as path from 'node:path';
import { filePathsOf, streamHandlesOf } from '../checkpoint/metadata/walk.ts';
import type { CheckpointMetadata, CheckpointSummary, SnapshotKind } from '../checkpoint/metadata/metadata.ts';
import { StorageError, errorMessage } from '../core/errors.ts';
import type { CheckpointId } from '../core/ids.ts';
import { dirFilesSize, listDir, pathKind, readMetadataFile } from './fs-io.ts';
import type { RestoreCandidate } from './storage.ts';
import { isInside, joinPath, METADATA_FILE_NAME, metadataPath, parseCheckpointDirName, parseSavepointDirName } from './paths.ts';

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
}

/**
 * Bytes a snapshot occupies: the files inside its directory (state files and `_metadata`, which
 * holds the inline state) plus the files it references outside it (shared files, counted at their
 * body size from the handles, once each). Shared files are also counted by every other checkpoint
 * referencing them, so sizes of several checkpoints do not add up to the disk usage.
 */
export async function snapshotSizeBytes(dir: string, meta: CheckpointMetadata | null): Promise<number> {
  let total = await dirFilesSize(dir);
  if (meta === null) return total;
  const outside = new Set(filePathsOf(meta).filter((p) => !isInside(dir, p)));
  for (const h of streamHandlesOf(meta)) {
    if (h.type === 'file' && outside.delete(h.path)) total += h.size;
  }
  return total;
}

/** Reads and checks the metadata of a chk-<n> directory: its id must match the directory's name. */
export async function readCheckpointDirMetadata(dir: string, expectedId: CheckpointId | null): Promise<CheckpointMetadata> {
  const file = metadataPath(dir);
  const meta = await readMetadataFile(file);
  if (expectedId !== null && meta.checkpointId !== expectedId) {
    throw new StorageError('CORRUPT_FILE', file, `metadata is for checkpoint ${meta.checkpointId} but its directory is chk-${expectedId}`);
  }
  return meta;
}

/** The chk-<n> directories of a job directory, ascending by id, with whether they hold `_metadata`. */
async function checkpointDirsOf(jobDir: string): Promise<Array<{ id: CheckpointId; dir: string; hasMetadata: boolean }>> {
  const out: Array<{ id: CheckpointId; dir: string; hasMetadata: boolean }> = [];
  for (const entry of await listDir(jobDir)) {
    const id = entry.isDirectory() ? parseCheckpointDirName(entry.name) : null;
    if (id === null) continue;
    const dir = joinPath(jobDir, entry.name);
    out.push({ id, dir, hasMetadata: (await pathKind(metadataPath(dir))) === 'file' });
  }
  return out.sort((a, b) => a.id - b.id);
}

/** chk-<n> directories without `_metadata`: abandoned checkpoints, to delete when a job starts. */
export async function incompleteCheckpointDirs(jobDir: string): Promise<string[]> {
  return (await checkpointDirsOf(path.resolve(jobDir))).filter((c) => !c.hasMetadata).map((c) => c.dir);
}

/**
 * The directory holding `_metadata` for a path a person gave: a chk-<n> or savepoint directory, a
 * `_metadata` file, or a job directory (its newest checkpoint that has `_metadata`).
 */
export async function resolveCheckpointLocation(p: string): Promise<string> {
  const abs = path.resolve(p);
  const kind = await pathKind(abs);
  if (kind === 'missing') throw new StorageError('MISSING_FILE', abs, 'no such checkpoint, savepoint or job directory');
  if (kind === 'file') {
    if (path.basename(abs) === METADATA_FILE_NAME) return path.dirname(abs);
    throw new StorageError('MISSING_FILE', abs, `not a checkpoint: expected a directory or a ${METADATA_FILE_NAME} file`);
  }
  if ((await pathKind(metadataPath(abs))) === 'file') return abs;
  const chks = await checkpointDirsOf(abs);
  const complete = chks.filter((c) => c.hasMetadata);
  if (complete.length > 0) return complete[complete.length - 1]!.dir;
  if (chks.length > 0)
    throw new StorageError(
      'MISSING_FILE',
      abs,
      `no completed checkpoint: ${chks.length} checkpoint director${chks.length === 1 ? 'y has' : 'ies have'} no ${METADATA_FILE_NAME}`,
    );
  const what = parseCheckpointDirName(path.basename(abs)) !== null ? 'incomplete checkpoint' : 'not a checkpoint';
  throw new StorageError('MISSING_FILE', abs, `${what}: no ${METADATA_FILE_NAME} in this directory`);
}

/**
 * Restore candidates for a path a person gave, newest first: every checkpoint of a job directory
 * that has `_metadata` (read lazily, so a corrupt newest one can be skipped), or the one snapshot
 * the path names (read now: there is nothing to fall back to, and its errors belong at the start).
 */
export async function fsRestoreCandidates(p: string): Promise<RestoreCandidate[]> {
  const abs = path.resolve(p);
  if ((await pathKind(abs)) === 'dir' && (await pathKind(metadataPath(abs))) !== 'file') {
    const complete = (await checkpointDirsOf(abs)).filter((c) => c.hasMetadata);
    if (complete.length > 0) {
      return complete.reverse().map((c) => ({ checkpointId: c.id, location: c.dir, load: () => readCheckpointDirMetadata(c.dir, c.id) }));
    }
  }
  const location = await resolveCheckpointLocation(abs);
  const metadata = await readMetadataFile(metadataPath(location));
  return [{ checkpointId: metadata.checkpointId, location, load: async () => metadata }];
}

/** Reads and verifies the metadata of the snapshot at `p` (see `resolveCheckpointLocation`). */
export async function readCheckpointMetadataAt(p: string): Promise<CheckpointMetadata> {
  return readMetadataFile(metadataPath(await resolveCheckpointLocation(p)));
}

/** Describes one snapshot directory; a metadata problem becomes status 'corrupt', not an exception. */
async function describe(dir: string, jobId: string | null, id: CheckpointId, kind: SnapshotKind, hasMetadata: boolean): Promise<StoredSnapshotListing> {
  if (!hasMetadata) {
    return { jobId, checkpointId: id, location: dir, kind, timestampMs: null, sizeBytes: await dirFilesSize(dir), status: 'incomplete' };
  }
  try {
    const meta = await readCheckpointDirMetadata(dir, kind === 'checkpoint' ? id : null);
    const sizeBytes = await snapshotSizeBytes(dir, meta);
    return {
      jobId: jobId ?? meta.jobId,
      checkpointId: meta.checkpointId,
      location: dir,
      kind: meta.kind,
      timestampMs: meta.timestampMs,
      sizeBytes,
      status: 'complete',
      ...(meta.summary ? { summary: meta.summary } : {}),
    };
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    const sizeBytes = await dirFilesSize(dir);
    return { jobId, checkpointId: id, location: dir, kind, timestampMs: null, sizeBytes, status: 'corrupt', error: errorMessage(err) };
  }
}

async function listJobDir(jobDir: string): Promise<StoredSnapshotListing[]> {
  const jobId = path.basename(jobDir);
  const out: StoredSnapshotListing[] = [];
  for (const c of await checkpointDirsOf(jobDir)) out.push(await describe(c.dir, jobId, c.id, 'checkpoint', c.hasMetadata));
  return out;
}

async function describeSavepointDir(dir: string): Promise<StoredSnapshotListing | null> {
  const parsed = parseSavepointDirName(path.basename(dir));
  if (parsed === null) return null;
  const hasMetadata = (await pathKind(metadataPath(dir))) === 'file';
  return describe(dir, null, parsed.checkpointId, 'savepoint', hasMetadata);
}

/**
 * Every snapshot under `dir`: a checkpoint root (job directories inside), a job directory (chk-<n>
 * inside), a savepoint root (savepoint-<id>-<rand> inside), or one chk-<n> or savepoint directory.
 * Sorted by job, then id.
 */
export async function listCheckpointsIn(dir: string): Promise<StoredSnapshotListing[]> {
  const abs = path.resolve(dir);
  const kind = await pathKind(abs);
  if (kind === 'missing') throw new StorageError('MISSING_FILE', abs, 'no such directory');
  if (kind !== 'dir') throw new StorageError('MISSING_FILE', abs, 'not a directory');
  const single = await describeSavepointDir(abs);
  if (single !== null) return [single];
  const chkId = parseCheckpointDirName(path.basename(abs));
  if (chkId !== null) {
    const hasMetadata = (await pathKind(metadataPath(abs))) === 'file';
    return [await describe(abs, path.basename(path.dirname(abs)), chkId, 'checkpoint', hasMetadata)];
  }
  const out = await listJobDir(abs);
  if (out.length === 0) {
    for (const entry of await listDir(abs)) {
      if (!entry.isDirectory()) continue;
      const sub = joinPath(abs, entry.name);
      const savepoint = await describeSavepointDir(sub);
      if (savepoint !== null) out.push(savepoint);
      else out.push(...(await listJobDir(sub)));
    }
  }
  return out.sort(compareListings);
}

function compareListings(a: StoredSnapshotListing, b: StoredSnapshotListing): number {
  const ja = a.jobId ?? '';
  const jb = b.jobId ?? '';
  if (ja !== jb) return ja < jb ? -1 : 1;
  if (a.checkpointId !== b.checkpointId) return a.checkpointId - b.checkpointId;
  return a.location < b.location ? -1 : a.location > b.location ? 1 : 0;
}
