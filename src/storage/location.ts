/**
 * The one place that decides what a storage location a user gives may be (`checkpointStorage`,
 * `restoreFrom`, `--checkpoint-dir`, `--from`, `--dir`) and which storage it opens: a registry of
 * URL schemes, each one entry that checks its locations and creates the checkpoint storage. Built
 * in: `file:` (a `file:` URL or a plain path), `memory:` (`'memory'` is its shorthand) and `s3:`
 * (`s3://bucket/prefix`, `storage/s3/`). Any other scheme is refused with an error naming the
 * option and listing the registered schemes, instead of being taken for a relative directory. A
 * storage registers its scheme here; that is all it takes for the option, the CLI flags and
 * restores to accept it.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../core/errors.ts';
import type { JobId } from '../core/ids.ts';
import { FsCheckpointStorage } from './fs-storage.ts';
import { MemoryCheckpointStorage } from './memory-storage.ts';
import { MEMORY_SCHEME } from './paths.ts';
import { S3_STORAGE_SCHEME } from './s3/scheme.ts';
import { FS_SNAPSHOT_TOOLS, type SnapshotTools } from './snapshot-tools.ts';
import { registerUrlSnapshotTools } from './any-reader.ts';
import type { CheckpointStorage } from './storage.ts';

/** How a job's checkpoint storage is opened. */
export interface OpenStorageOptions {
  /**
   * The storage is a task manager's in another thread or process: a storage whose files that one
   * cannot share (memory) keeps every state stream inline in its handle, so the handles that travel
   * to the job master carry everything and nothing stays behind in the task manager.
   */
  readonly inlineAll?: boolean;
  /** How an `s3:` storage reaches its endpoint (the `s3` option); path style also from `WEIR_S3_FORCE_PATH_STYLE`. */
  readonly s3?: { readonly forcePathStyle: boolean };
  /** How long one storage operation (an upload with its retries) may take: the checkpoint timeout. */
  readonly operationTimeoutMs?: number;
}

/** One URL scheme's storage: how its locations are checked and how a job's checkpoint storage is opened at one. */
export interface StorageScheme {
  /** The scheme, lower case, without the colon (`file`, `memory`, `s3`). */
  readonly scheme: string;
  /**
   * Any location of this storage (a checkpoint, a savepoint, a job's directory) in the form the
   * storage layer opens: a `file:` URL becomes its path. Throws an Error saying what is wrong.
   */
  location(given: string): string;
  /** Where a job's checkpoints may be rooted (`checkpointStorage`), as `open` takes it; default `location`. Throws an Error saying what is wrong. */
  root?(given: string): string;
  /** The checkpoint storage of job `jobId` under `root` (as `root` returned it). */
  open(root: string, jobId: JobId, options: OpenStorageOptions): CheckpointStorage;
  /** Reading, listing and deleting its snapshots without a job (the CLI); default the file system's. */
  tools?(): SnapshotTools;
}

/** `scheme:` at the start; two characters at least, so a Windows drive (`C:\x`) stays a path. */
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]+):/;
const MEMORY = MEMORY_SCHEME.slice(0, -1);

const FILE_SCHEME: StorageScheme = {
  scheme: 'file',
  location: (given) => (given.toLowerCase().startsWith('file:') ? fileURLToPath(given) : given),
  // Files written by a task manager are read by the job master from the same directory: nothing to inline.
  open: (root, jobId) => new FsCheckpointStorage(root, jobId),
};

const MEMORY_STORAGE_SCHEME: StorageScheme = {
  scheme: MEMORY,
  location: (given) => given,
  root: (given) => {
    if (given === MEMORY || given.toLowerCase() === MEMORY_SCHEME) return MEMORY;
    throw new Error(`memory storage has no directories: give '${MEMORY}' (each job keeps its checkpoints under ${MEMORY_SCHEME}<job-id>)`);
  },
  open: (_root, jobId, o) => new MemoryCheckpointStorage(jobId, o.inlineAll === true ? { inlineThresholdBytes: Number.MAX_SAFE_INTEGER } : {}),
};

const schemes = new Map<string, StorageScheme>();
for (const entry of [FILE_SCHEME, MEMORY_STORAGE_SCHEME, S3_STORAGE_SCHEME]) registerStorageScheme(entry);

/**
 * Makes locations of `entry.scheme` valid everywhere a storage location is given.
 * @internal for storages that come with a URL scheme
 */
export function registerStorageScheme(entry: StorageScheme): void {
  schemes.set(entry.scheme.toLowerCase(), entry);
  // Every storage can then read snapshots at this scheme's URLs (a restore from another storage).
  if (entry.tools !== undefined) registerUrlSnapshotTools(entry.scheme, entry.tools);
}

/** The registered schemes, for messages: `file:, memory:`. */
export function registeredSchemes(): string[] {
  return [...schemes.keys()].map((s) => `${s}:`);
}

/**
 * The scheme entry a location belongs to and its scheme as written: a plain path is `file`, the
 * bare word `memory` is memory storage.
 * @throws ConfigError naming `option` when the scheme is not registered.
 */
function schemeOf(given: string, option: string): StorageScheme {
  if (given === MEMORY) return MEMORY_STORAGE_SCHEME;
  const match = SCHEME_RE.exec(given);
  if (match === null) return FILE_SCHEME;
  const scheme = match[1]!.toLowerCase();
  const entry = schemes.get(scheme);
  if (entry !== undefined) return entry;
  throw new ConfigError(
    option,
    `unsupported URL scheme '${scheme}:' in ${JSON.stringify(given)}: give a directory path or one of ${registeredSchemes().join(', ')}`,
  );
}

/** `given` with any user info of a URL (`//key:secret@`) masked: credentials never go into messages. */
function redacted(given: string): string {
  return given.replace(/^([A-Za-z][A-Za-z0-9+.-]+:\/\/)[^/@]*@/, '$1***@');
}

function resolveWith(given: string, option: string, how: (entry: StorageScheme) => (given: string) => string): string {
  const entry = schemeOf(given, option);
  if (redacted(given) !== given)
    throw new ConfigError(
      option,
      `invalid ${entry.scheme}: location ${JSON.stringify(redacted(given))}: credentials do not go into a location; give them the storage's own way (for s3: the AWS environment or profile)`,
    );
  try {
    return how(entry)(given);
  } catch (err) {
    throw new ConfigError(option, `invalid ${entry.scheme}: location ${JSON.stringify(given)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The location as the storage layer takes it: a plain path or `memory` unchanged, a `file:` URL
 * as its path, a registered scheme's location as its entry makes it.
 * @param option the option or flag that gave it, named in the error (`--from`).
 * @throws ConfigError naming `option` and the scheme when the scheme is not registered or the location is malformed.
 */
export function resolveStorageLocation(location: string, option: string): string {
  return resolveWith(location, option, (entry) => entry.location);
}

/**
 * Where a job's checkpoint storage is rooted (`checkpointStorage`, `--checkpoint-dir`), as
 * `openCheckpointStorage` takes it: a directory path, `'memory'`, or a registered scheme's root.
 * @throws ConfigError naming `option` as `resolveStorageLocation` does, and for a location that cannot be a root (`memory:x`).
 */
export function resolveStorageRoot(location: string, option: string): string {
  return resolveWith(location, option, (entry) => entry.root ?? entry.location);
}

/** The checkpoint storage of job `jobId` under a root `resolveStorageRoot` returned, created by its scheme's entry. */
export function openCheckpointStorage(root: string, jobId: JobId, options: OpenStorageOptions = {}): CheckpointStorage {
  return schemeOf(root, 'checkpointStorage').open(root, jobId, options);
}

/** A resolved location made independent of the working directory: a path made absolute, any URL unchanged. */
export function absoluteLocation(resolved: string): string {
  return resolved === MEMORY || SCHEME_RE.test(resolved) ? resolved : path.resolve(resolved);
}

/** The snapshot tools for a resolved location (`resolveStorageLocation`), by its scheme. */
export function snapshotToolsFor(resolved: string, option: string): SnapshotTools {
  return schemeOf(resolved, option).tools?.() ?? FS_SNAPSHOT_TOOLS;
}
