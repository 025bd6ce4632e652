/**
 * Finding snapshot directories on the file system by their names and entries, without decoding
 * anything: for restore (`--from <path>`), the CLI's listing, and cleanup of incomplete checkpoints
 * on start. What a `_metadata` says is read above, in `checkpoint/restore`.
 */
import * as path from 'node:path';
import { StorageError } from '../core/errors.ts';
import type { CheckpointId } from '../core/ids.ts';
import { checkStateFileFs, dirFilesSize, listDir, pathKind, readMetadataBytesFs } from './fs-io.ts';
import { joinPath, metadataPath, parseCheckpointDirName, parseSavepointDirName } from './paths.ts';
import { readRestoredFromFs } from './restored-from.ts';
import type { CheckpointDirEntry, SnapshotPathProbe, SnapshotReader } from './storage.ts';

/** The chk-<n> directories of a job directory, ascending by id, with whether they hold `_metadata`. */
export async function checkpointDirsOf(jobDir: string): Promise<CheckpointDirEntry[]> {
  const out: CheckpointDirEntry[] = [];
  for (const entry of await listDir(jobDir)) {
    const id = entry.isDirectory() ? parseCheckpointDirName(entry.name) : null;
    if (id === null) continue;
    const location = joinPath(jobDir, entry.name);
    out.push({ checkpointId: id, location, hasMetadata: (await pathKind(metadataPath(location))) === 'file' });
  }
  return out.sort((a, b) => a.checkpointId - b.checkpointId);
}

/** chk-<n> directories without `_metadata`: abandoned checkpoints, to delete when a job starts. */
export async function incompleteCheckpointDirs(jobDir: string): Promise<string[]> {
  return (await checkpointDirsOf(path.resolve(jobDir))).filter((c) => !c.hasMetadata).map((c) => c.location);
}

/** What is at `p` on the file system (see SnapshotPathProbe). */
export async function probeFs(p: string): Promise<SnapshotPathProbe> {
  const abs = path.resolve(p);
  const kind = await pathKind(abs);
  if (kind === 'missing' || kind === 'file') return { path: abs, kind, hasMetadata: false, checkpointDirs: [] };
  const hasMetadata = (await pathKind(metadataPath(abs))) === 'file';
  // Listing something that is neither file nor directory fails here, naming it.
  const checkpointDirs = hasMetadata ? [] : await checkpointDirsOf(abs);
  return { path: abs, kind: 'dir', hasMetadata, checkpointDirs };
}

/** A snapshot directory found by its name: a job's chk-<n> or a savepoint-<id>-<rand>. */
export interface SnapshotDirEntry {
  /** The job directory's name for a checkpoint; null for a savepoint (its metadata says). */
  readonly jobId: string | null;
  /** From the directory's name. */
  readonly checkpointId: CheckpointId;
  /** Absolute path of the directory. */
  readonly location: string;
  readonly kind: 'checkpoint' | 'savepoint';
  readonly hasMetadata: boolean;
}

async function jobDirEntries(jobDir: string): Promise<SnapshotDirEntry[]> {
  const jobId = path.basename(jobDir);
  return (await checkpointDirsOf(jobDir)).map((c) => ({
    jobId,
    checkpointId: c.checkpointId,
    location: c.location,
    kind: 'checkpoint',
    hasMetadata: c.hasMetadata,
  }));
}

async function savepointEntry(dir: string): Promise<SnapshotDirEntry | null> {
  const parsed = parseSavepointDirName(path.basename(dir));
  if (parsed === null) return null;
  const hasMetadata = (await pathKind(metadataPath(dir))) === 'file';
  return { jobId: null, checkpointId: parsed.checkpointId, location: dir, kind: 'savepoint', hasMetadata };
}

/**
 * Every snapshot directory under `dir`: a checkpoint root (job directories inside), a job
 * directory (chk-<n> inside), a savepoint root (savepoint-<id>-<rand> inside), or one chk-<n> or
 * savepoint directory. In directory order; a missing `dir` or a file is MISSING_FILE naming it.
 */
export async function findSnapshotDirs(dir: string): Promise<SnapshotDirEntry[]> {
  const abs = path.resolve(dir);
  const kind = await pathKind(abs);
  if (kind === 'missing') throw new StorageError('MISSING_FILE', abs, 'no such directory');
  if (kind !== 'dir') throw new StorageError('MISSING_FILE', abs, 'not a directory');
  const single = await savepointEntry(abs);
  if (single !== null) return [single];
  const chkId = parseCheckpointDirName(path.basename(abs));
  if (chkId !== null) {
    const hasMetadata = (await pathKind(metadataPath(abs))) === 'file';
    return [{ jobId: path.basename(path.dirname(abs)), checkpointId: chkId, location: abs, kind: 'checkpoint', hasMetadata }];
  }
  const out = await jobDirEntries(abs);
  if (out.length > 0) return out;
  for (const entry of await listDir(abs)) {
    if (!entry.isDirectory()) continue;
    const sub = joinPath(abs, entry.name);
    const savepoint = await savepointEntry(sub);
    if (savepoint !== null) out.push(savepoint);
    else out.push(...(await jobDirEntries(sub)));
  }
  return out;
}

/** Reads snapshots anywhere on the local file system. */
export const fsSnapshotReader: SnapshotReader = {
  probe: probeFs,
  readMetadataBytes: readMetadataBytesFs,
  dirSizeBytes: dirFilesSize,
  readRestoredFrom: readRestoredFromFs,
  checkStateFile: checkStateFileFs,
};
