/**
 * The registry of jobs running under `weir run` on this machine: one JSON file per job,
 * `<os.tmpdir()>/weir-jobs/<jobId>.json`, written when the job's control endpoint listens and
 * removed when the run ends, so `weir savepoint <jobId>` can find the endpoint by job id.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UsageError } from './exit.ts';

/** What one registry file holds. */
export interface RegisteredJob {
  readonly jobId: string;
  /** The job's name (the module's `name` export or file name): `<job>` may be a name when one job runs under it. */
  readonly name?: string;
  /** `http://127.0.0.1:<port>` of the control endpoint. */
  readonly address: string;
  /** The `weir run` process serving it. */
  readonly pid: number;
  /** Absolute path of the job module. */
  readonly module: string;
  /** ISO-8601 wall-clock time the run started. */
  readonly startedAt: string;
}

const SAFE_ID_RE = /^[A-Za-z0-9._-]+$/;

export function registryDir(): string {
  return path.join(os.tmpdir(), 'weir-jobs');
}

export function isJobIdLike(s: string): boolean {
  return SAFE_ID_RE.test(s) && s !== '.' && s !== '..';
}

export function registryFile(jobId: string): string {
  if (!isJobIdLike(jobId)) throw new UsageError(`not a job id or control address: '${jobId}'`);
  return path.join(registryDir(), `${jobId}.json`);
}

/** Writes the job's entry atomically (temp name, rename), readable by its owner only. */
export function registerJob(entry: RegisteredJob): string {
  const file = registryFile(entry.jobId);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.tmp-${process.pid}`;
  writeFileSync(temp, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
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

/** The entry of `jobId`, or null when there is none. A malformed file is a UsageError naming it. */
export function lookupJob(jobId: string): RegisteredJob | null {
  return readEntry(registryFile(jobId));
}

/** Every readable entry; malformed ones are skipped (a listing should not fail on one bad file). */
export function listJobs(): RegisteredJob[] {
  let names: string[];
  try {
    names = readdirSync(registryDir());
  } catch {
    return [];
  }
  const out: RegisteredJob[] = [];
  for (const n of names.filter((f) => f.endsWith('.json')).sort()) {
    try {
      const entry = readEntry(path.join(registryDir(), n));
      if (entry !== null) out.push(entry);
    } catch {
      // skipped
    }
  }
  return out;
}

function readEntry(file: string): RegisteredJob | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
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
  return typeof e.jobId === 'string' && (e.name === undefined || typeof e.name === 'string') && typeof e.address === 'string' && Number.isSafeInteger(e.pid) && typeof e.module === 'string' && typeof e.startedAt === 'string';
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
