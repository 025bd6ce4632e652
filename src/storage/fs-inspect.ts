/**
 * Finding snapshot directories on the file system by their names and entries, without decoding
 * anything: for restore (`--from <path>`), the CLI's listing, and cleanup of incomplete checkpoints
 * on start. What a `_metadata` says is read above, in `checkpoint/restore`.
 */
import * as path from 'node:path';
import { StorageError } from '../core/errors.ts';
import type { CheckpointId } from '../core/ids.ts';
import { checkStateFileFs, dirFilesSize, listDir, pathKind, readMetadataBytesFs } from './fs-io.ts';
import { baseName, joinPath, metadataPath, parentDir, parseCheckpointDirName, parseSavepointDirName } from './paths.ts';
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

/** What finding snapshot directories needs of a storage: what is at a path, its sub-directories, whether `_metadata` is in one. */
export interface SnapshotDirLister {
  /** The path made absolute (or left as it is, for a URL). */
  absolute(p: string): string;
  kind(p: string): Promise<'file' | 'dir' | 'missing' | 'other'>;
  /** Paths of the directories right inside `dir`. */
  subdirs(dir: string): Promise<string[]>;
  hasMetadata(dir: string): Promise<boolean>;
}

/** Directories on the local file system. */
export const fsDirLister: SnapshotDirLister = {
  absolute: (p) => path.resolve(p),
  kind: pathKind,
  subdirs: async (dir) => (await listDir(dir)).filter((e) => e.isDirectory()).map((e) => joinPath(dir, e.name)),
  hasMetadata: async (dir) => (await pathKind(metadataPath(dir))) === 'file',
};

async function jobDirEntries(lister: SnapshotDirLister, jobDir: string): Promise<SnapshotDirEntry[]> {
  const jobId = baseName(jobDir);
  const out: SnapshotDirEntry[] = [];
  for (const sub of await lister.subdirs(jobDir)) {
    const checkpointId = parseCheckpointDirName(baseName(sub));
    if (checkpointId !== null) out.push({ jobId, checkpointId, location: sub, kind: 'checkpoint', hasMetadata: await lister.hasMetadata(sub) });
  }
  return out.sort((a, b) => a.checkpointId - b.checkpointId);
}

async function savepointEntry(lister: SnapshotDirLister, dir: string): Promise<SnapshotDirEntry | null> {
  const parsed = parseSavepointDirName(baseName(dir));
  if (parsed === null) return null;
  return { jobId: null, checkpointId: parsed.checkpointId, location: dir, kind: 'savepoint', hasMetadata: await lister.hasMetadata(dir) };
}

/**
 * Every snapshot directory under `dir`: a checkpoint root (job directories inside), a job
 * directory (chk-<n> inside), a savepoint root (savepoint-<id>-<rand> inside), or one chk-<n> or
 * savepoint directory. On the file system unless another storage's `lister` is given. A missing
 * `dir` or a file is MISSING_FILE naming it.
 */
export async function findSnapshotDirs(dir: string, lister: SnapshotDirLister = fsDirLister): Promise<SnapshotDirEntry[]> {
  const abs = lister.absolute(dir);
  const kind = await lister.kind(abs);
  if (kind === 'missing') throw new StorageError('MISSING_FILE', abs, 'no such directory');
  if (kind !== 'dir') throw new StorageError('MISSING_FILE', abs, 'not a directory');
  const single = await savepointEntry(lister, abs);
  if (single !== null) return [single];
  const chkId = parseCheckpointDirName(baseName(abs));
  if (chkId !== null)
    return [{ jobId: baseName(parentDir(abs)), checkpointId: chkId, location: abs, kind: 'checkpoint', hasMetadata: await lister.hasMetadata(abs) }];
  const out = await jobDirEntries(lister, abs);
  if (out.length > 0) return out;
  for (const sub of await lister.subdirs(abs)) {
    const savepoint = await savepointEntry(lister, sub);
    if (savepoint !== null) out.push(savepoint);
    else out.push(...(await jobDirEntries(lister, sub)));
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
