/**
 * The registry of jobs running under `weir run` for this user: one JSON file per job,
 * `<registry dir>/<jobId>.json` (see registry-dir.ts), written when the job's control endpoint
 * listens and removed when the run ends, so `weir savepoint <jobId>` can find the endpoint and the
 * token it demands. Files are created 0600 under a temporary name that must not exist (never
 * through a symlink) and renamed into place; they are read without following symlinks.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError } from './exit.ts';
import { checkedRegistryDir, ensureRegistryDir, registryDir } from './registry-dir.ts';

/** What one registry file holds. */
export interface RegisteredJob {
  readonly jobId: string;
  /** The job's name (the module's `name` export or file name): `<job>` may be a name when one job runs under it. */
  readonly name?: string;
  /** `http://127.0.0.1:<port>` of the control endpoint. */
  readonly address: string;
  /** The secret every control request must carry (`Authorization: Bearer <token>`). */
  readonly token: string;
  /** The `weir run` process serving it. */
  readonly pid: number;
  /** Absolute path of the job module. */
  readonly module: string;
  /** ISO-8601 wall-clock time the run started. */
  readonly startedAt: string;
  /**
   * With high availability: this process's role. A standby has no job yet: its entry (id
   * `standby-<pid>`) names the job it waits for, the leader and that leader's epoch; `address` is
   * its web port (`/ha`, `/readyz`) or '-'.
   */
  readonly ha?: RegisteredHa;
}

/** A registry entry's high availability part (the store without its password). */
export interface RegisteredHa {
  readonly role: 'leader' | 'standby';
  /** The job's name in the HA store. */
  readonly job: string;
  /** The leader's epoch (a standby: of the leader it waits for). */
  readonly epoch: number;
  /** A standby: the leader it waits for. */
  readonly leader?: string;
  readonly store: string;
}

const SAFE_ID_RE = /^[A-Za-z0-9._-]+$/;
const TOKEN_BYTES = 32;

export { registryDir };

/** A fresh control token: 32 random bytes, hex. */
export function newControlToken(): string {
  return randomBytes(TOKEN_BYTES).toString('hex');
}

export function isJobIdLike(s: string): boolean {
  return SAFE_ID_RE.test(s) && s !== '.' && s !== '..';
}

export function registryFile(jobId: string, dir = registryDir()): string {
  if (!isJobIdLike(jobId)) throw new UsageError(`not a job id or control address: '${jobId}'`);
  return path.join(dir, `${jobId}.json`);
}

/** Writes the job's entry: created 0600 under a fresh temporary name (O_EXCL, O_NOFOLLOW), synced, renamed into place. */
export function registerJob(entry: RegisteredJob): string {
  const file = registryFile(entry.jobId, ensureRegistryDir());
  const temp = `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(entry, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  return file;
}

/** Removes the job's entry if it is still ours; never throws (it runs while the process exits). */
export function unregisterJob(jobId: string, pid = process.pid): void {
  try {
    const file = registryFile(jobId);
    const entry = readEntry(file);
    if (entry !== null && entry.pid === pid) unlinkSync(file);
  } catch {
    // Already gone, or unreadable: nothing of ours to remove.
  }
}

/** The entry of `jobId`, or null when there is none. An unsafe registry or a bad file is a UsageError naming it. */
export function lookupJob(jobId: string): RegisteredJob | null {
  const dir = checkedRegistryDir();
  return dir === null ? null : readEntry(registryFile(jobId, dir));
}

/** Every readable entry, by file name; bad files are skipped (a listing should not fail on one of them). An unsafe registry throws. */
export function listJobs(): RegisteredJob[] {
  const dir = checkedRegistryDir();
  if (dir === null) return [];
  const out: RegisteredJob[] = [];
  for (const n of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    try {
      const entry = readEntry(path.join(dir, n));
      if (entry !== null) out.push(entry);
    } catch {
      // skipped
    }
  }
  return out;
}

/** Reads an entry without following a symlink; it must be a regular file of ours that only we can read. */
function readEntry(file: string): RegisteredJob | null {
  let text: string;
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const info = fstatSync(fd);
      const uid = process.getuid?.() ?? -1;
      if (!info.isFile()) throw new UsageError(`job registry entry ${file} is not a regular file`);
      if ((uid >= 0 && info.uid !== uid) || (info.mode & 0o077) !== 0) {
        throw new UsageError(`refusing job registry entry ${file}: it must be owned by you and readable by you only (mode 0600)`);
      }
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new UsageError(`refusing job registry entry ${file}: it is a symbolic link`);
    throw new UsageError(`cannot read job registry entry ${file}: ${(err as Error).message}`);
  }
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    throw new UsageError(`job registry entry ${file} is not JSON`);
  }
  if (!isRegisteredJob(entry)) throw new UsageError(`job registry entry ${file} is malformed`);
  return entry;
}

function isRegisteredJob(v: unknown): v is RegisteredJob {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.jobId === 'string' &&
    (e.name === undefined || typeof e.name === 'string') &&
    typeof e.address === 'string' &&
    typeof e.token === 'string' &&
    e.token.length > 0 &&
    Number.isSafeInteger(e.pid) &&
    typeof e.module === 'string' &&
    typeof e.startedAt === 'string' &&
    (e.ha === undefined || isRegisteredHa(e.ha))
  );
}

function isRegisteredHa(v: unknown): v is RegisteredHa {
  if (typeof v !== 'object' || v === null) return false;
  const h = v as Record<string, unknown>;
  return (h.role === 'leader' || h.role === 'standby') && typeof h.job === 'string' && Number.isSafeInteger(h.epoch) && typeof h.store === 'string';
}

/** Removes a stale entry (its process is gone); never throws. */
export function removeStaleEntry(jobId: string): void {
  try {
    unlinkSync(registryFile(jobId));
  } catch {
    // Someone else removed it first.
  }
}

/** Whether a process with this pid exists (one of another user counts as alive). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
