/**
 * The one place that builds and parses storage paths (DESIGN.md "Storage layout"):
 *
 *   <root>/<job-id>/chk-<n>/_metadata        written last, atomically
 *   <root>/<job-id>/chk-<n>/<file>           state exclusive to checkpoint n
 *   <root>/<job-id>/shared/<file>            incremental files, reference-counted
 *   <root>/<job-id>/taskowned/<file>         changelog segments (later)
 *   <savepoint-dir>/savepoint-<id>-<rand>/   self-contained and relocatable
 *
 * Memory storage uses the same layout under `memory:<job-id>`, always with `/` separators; so does
 * an object store under its URL (`s3://bucket/prefix/<job-id>/...`), whose `scheme://authority`
 * part is kept as it is and the rest joined with `/`.
 */
import * as path from 'node:path';
import { assert } from '../core/assert.ts';
import { checkpointId, type CheckpointId, type JobId } from '../core/ids.ts';

export const METADATA_FILE_NAME = '_metadata';
export const SHARED_DIR_NAME = 'shared';
export const TASK_OWNED_DIR_NAME = 'taskowned';
/** Which process runs (or ran) a job directory: `{ pid, host }`, so a later run can tell a dead run's leftovers. */
export const RUN_OWNER_FILE_NAME = '_run';
/** Which snapshot the run of a job directory was restored from (`restored-from.ts`): its lineage. */
export const RESTORED_FROM_FILE_NAME = '_restored_from';
export const MEMORY_SCHEME = 'memory:';

// Canonical numbers only (no leading zeros), so each id has exactly one directory name.
const CHECKPOINT_DIR_RE = /^chk-(0|[1-9]\d*)$/;
const SAVEPOINT_DIR_RE = /^savepoint-(0|[1-9]\d*)-([A-Za-z0-9]+)$/;
const TEMP_FILE_RE = /\.tmp-[A-Za-z0-9_-]+$/;
const SAFE_NAME_RE = /^[A-Za-z0-9._-]+$/;
const SUFFIX_RE = /^[A-Za-z0-9_-]+$/;

export function isMemoryPath(p: string): boolean {
  return p.startsWith(MEMORY_SCHEME);
}

/** `scheme://authority` at the start of an object-store URL (`s3://bucket`); the rest is a `/` path. */
const URL_ROOT_RE = /^[A-Za-z][A-Za-z0-9+.-]+:\/\/[^/]*/;

/** An object-store URL split into its root (`s3://bucket`) and its key as an absolute posix path (`/prefix/x`); null for other paths. */
function splitUrl(p: string): { readonly root: string; readonly rest: string } | null {
  if (isMemoryPath(p)) return null;
  const m = URL_ROOT_RE.exec(p);
  if (m === null) return null;
  const rest = p.slice(m[0].length);
  return { root: m[0], rest: rest === '' ? '/' : rest };
}

/** `root` + `rest` without a trailing `/` (the bucket itself is `s3://bucket`). */
function joinUrl(root: string, rest: string): string {
  return rest === '/' ? root : `${root}${rest}`;
}

/** Whether `p` is an object-store URL (`s3://bucket/key`): joined with `/`, never made absolute. */
export function isUrlPath(p: string): boolean {
  return splitUrl(p) !== null;
}

/** Joins path segments; `memory:` paths and object-store URLs always use `/`. */
export function joinPath(base: string, ...parts: string[]): string {
  const url = splitUrl(base);
  if (url !== null) return joinUrl(url.root, path.posix.join(url.rest, ...parts));
  return isMemoryPath(base) ? path.posix.join(base, ...parts) : path.join(base, ...parts);
}

export function parentDir(p: string): string {
  const url = splitUrl(p);
  if (url !== null) return joinUrl(url.root, path.posix.dirname(url.rest));
  return isMemoryPath(p) ? path.posix.dirname(p) : path.dirname(p);
}

export function baseName(p: string): string {
  const url = splitUrl(p);
  if (url !== null) return path.posix.basename(url.rest);
  return isMemoryPath(p) ? path.posix.basename(p) : path.basename(p);
}

/** `target` relative to `fromDir` (e.g. `keyed-x-3` or `../shared/abc`), as stored in metadata. */
export function relativePath(fromDir: string, target: string): string {
  assert(isMemoryPath(fromDir) === isMemoryPath(target), () => `cannot relate ${target} to ${fromDir}: different storages`);
  const from = splitUrl(fromDir);
  const to = splitUrl(target);
  assert((from === null) === (to === null) && from?.root === to?.root, () => `cannot relate ${target} to ${fromDir}: different storages`);
  if (from !== null && to !== null) return path.posix.relative(from.rest, to.rest);
  if (isMemoryPath(fromDir)) {
    const strip = (p: string): string => `/${p.slice(MEMORY_SCHEME.length)}`;
    return path.posix.relative(strip(fromDir), strip(target));
  }
  assert(path.isAbsolute(fromDir) && path.isAbsolute(target), () => `relativePath needs absolute paths: ${fromDir}, ${target}`);
  // Stored with `/` on every platform so metadata written on one OS reads on another.
  return path.relative(fromDir, target).split(path.sep).join('/');
}

/** Inverse of `relativePath`: resolves a stored relative path against the directory holding `_metadata`. */
export function resolveRelative(dir: string, relative: string): string {
  const url = splitUrl(dir);
  if (url !== null) return joinUrl(url.root, path.posix.join(url.rest, relative));
  if (isMemoryPath(dir)) return path.posix.join(dir, relative);
  return path.resolve(dir, ...relative.split('/'));
}

/** True when `p` is `dir` itself or inside it. */
export function isInside(dir: string, p: string): boolean {
  if (isMemoryPath(dir) !== isMemoryPath(p)) return false;
  if (splitUrl(dir)?.root !== splitUrl(p)?.root) return false;
  const rel = relativePath(dir, p);
  return rel === '' || (!rel.startsWith('../') && rel !== '..' && !path.isAbsolute(rel));
}

function assertSafeName(name: string, what: string): void {
  assert(SAFE_NAME_RE.test(name) && name !== '.' && name !== '..', () => `${what} is not a safe file name: ${JSON.stringify(name)}`);
}

/** `<root>/<jobId>`; for memory storage pass `MEMORY_SCHEME`-rooted `memoryJobDir`. */
export function jobDir(root: string, jobId: JobId): string {
  assertSafeName(jobId, 'job id');
  return joinPath(root, jobId);
}

export function memoryJobDir(jobId: JobId): string {
  assertSafeName(jobId, 'job id');
  return `${MEMORY_SCHEME}${jobId}`;
}

export function checkpointDirName(id: CheckpointId): string {
  assert(Number.isSafeInteger(id) && id >= 0, () => `invalid checkpoint id ${id}`);
  return `chk-${id}`;
}

/** The checkpoint id of a `chk-<n>` directory name, or null if the name is not one. */
export function parseCheckpointDirName(name: string): CheckpointId | null {
  const m = CHECKPOINT_DIR_RE.exec(name);
  if (m === null) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? checkpointId(n) : null;
}

export function checkpointDir(jobDirPath: string, id: CheckpointId): string {
  return joinPath(jobDirPath, checkpointDirName(id));
}

/** The `_metadata` file inside a checkpoint or savepoint directory. */
export function metadataPath(snapshotDir: string): string {
  return joinPath(snapshotDir, METADATA_FILE_NAME);
}

export function exclusiveFilePath(jobDirPath: string, id: CheckpointId, fileName: string): string {
  assertSafeName(fileName, 'state file name');
  return joinPath(checkpointDir(jobDirPath, id), fileName);
}

export function sharedDir(jobDirPath: string): string {
  return joinPath(jobDirPath, SHARED_DIR_NAME);
}

export function sharedFilePath(jobDirPath: string, fileName: string): string {
  assertSafeName(fileName, 'state file name');
  return joinPath(sharedDir(jobDirPath), fileName);
}

export function runOwnerPath(jobDirPath: string): string {
  return joinPath(jobDirPath, RUN_OWNER_FILE_NAME);
}

export function restoredFromPath(jobDirPath: string): string {
  return joinPath(jobDirPath, RESTORED_FROM_FILE_NAME);
}

export function taskOwnedDir(jobDirPath: string): string {
  return joinPath(jobDirPath, TASK_OWNED_DIR_NAME);
}

/** `<savepointRoot>/savepoint-<id>-<rand>`; `rand` comes from the caller's Random. */
export function savepointDir(savepointRoot: string, id: CheckpointId, rand: string): string {
  assert(/^[A-Za-z0-9]+$/.test(rand), () => `savepoint suffix must be alphanumeric: ${JSON.stringify(rand)}`);
  assert(Number.isSafeInteger(id) && id >= 0, () => `invalid checkpoint id ${id}`);
  return joinPath(savepointRoot, `savepoint-${id}-${rand}`);
}

export function parseSavepointDirName(name: string): { readonly checkpointId: CheckpointId; readonly rand: string } | null {
  const m = SAVEPOINT_DIR_RE.exec(name);
  if (m === null) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? { checkpointId: checkpointId(n), rand: m[2]! } : null;
}

/**
 * `<nameHint>-<suffix>` for a state file. The hint often carries a user's operator uid, so
 * characters that are not safe in file names become `_`.
 */
export function stateFileName(nameHint: string, suffix: string): string {
  assert(SUFFIX_RE.test(suffix), () => `file suffix must be letters, digits, _ or -: ${JSON.stringify(suffix)}`);
  const hint = nameHint
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 120);
  return `${hint === '' ? 'state' : hint}-${suffix}`;
}

/** The temporary name an atomic write goes through: `<name>.tmp-<suffix>`. */
export function tempFilePath(finalPath: string, suffix: string): string {
  assert(SUFFIX_RE.test(suffix), () => `file suffix must be letters, digits, _ or -: ${JSON.stringify(suffix)}`);
  return `${finalPath}.tmp-${suffix}`;
}

export function isTempFileName(name: string): boolean {
  return TEMP_FILE_RE.test(name);
}

// ---- shared (incremental) state files ----

const SHARED_FILE_RE = /^ckpt-(0|[1-9]\d*)-/;

/**
 * The name hint of a shared file written by checkpoint `id` (the storage appends a unique suffix).
 * The id leads the name, so the files an aborted checkpoint left in `shared/` can be found.
 */
export function sharedStateFileHint(id: number, what: string): string {
  assert(Number.isSafeInteger(id) && id >= 0, () => `invalid checkpoint id ${id}`);
  return `ckpt-${id}-${what}`;
}

/** The checkpoint that wrote a shared file, from its name; null for names Weir did not give. */
export function checkpointIdOfSharedFile(fileName: string): CheckpointId | null {
  const m = SHARED_FILE_RE.exec(fileName);
  if (m === null) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? checkpointId(n) : null;
}
