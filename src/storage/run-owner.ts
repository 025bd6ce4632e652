/**
 * Which process owns a job directory or a working directory, and whether it still runs. A run
 * writes `{ pid, host }` into its job directory at start; a later run on the same host removes
 * what a dead run left half-done (checkpoint directories without `_metadata`) and never touches a
 * directory whose owner lives or cannot be told (another host, no owner file).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { errnoCode } from './atomic-write.ts';
import { checkpointDir, metadataPath, parseCheckpointDirName, runOwnerPath } from './paths.ts';

export interface RunOwner {
  readonly pid: number;
  readonly host: string;
}

export function currentOwner(): RunOwner {
  return { pid: process.pid, host: hostname() };
}

/** True unless the owner is on this host and its process is gone (a reused pid counts as alive: never delete on a guess). */
export function ownerMayLive(owner: RunOwner): boolean {
  if (owner.host !== hostname()) return true;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== 'ESRCH';
  }
}

/** Records this process as the owner of `jobDir` (created if needed). */
export function writeRunOwner(jobDir: string): void {
  writeFileSync(runOwnerPath(jobDir), `${JSON.stringify(currentOwner())}\n`);
}

function readRunOwner(jobDir: string): RunOwner | null {
  try {
    const o = JSON.parse(readFileSync(runOwnerPath(jobDir), 'utf8')) as Partial<RunOwner>;
    return typeof o.pid === 'number' && typeof o.host === 'string' ? { pid: o.pid, host: o.host } : null;
  } catch {
    return null;
  }
}

/**
 * Removes checkpoint directories without `_metadata` in the job directories under `root` whose
 * run is dead; returns what it removed. Completed checkpoints are never touched.
 */
export function removeDeadRunsLeftovers(root: string, ownJobDir: string): string[] {
  if (!existsSync(root)) return [];
  const removed: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const jobDir = path.join(root, entry.name);
    if (!entry.isDirectory() || jobDir === ownJobDir) continue;
    const owner = readRunOwner(jobDir);
    if (owner === null || ownerMayLive(owner)) continue;
    for (const name of readdirSync(jobDir)) {
      const id = parseCheckpointDirName(name);
      if (id === null) continue;
      const dir = checkpointDir(jobDir, id);
      if (existsSync(metadataPath(dir))) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    }
  }
  return removed;
}
