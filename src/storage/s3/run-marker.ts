/**
 * Which run owns an S3 job prefix: the job master writes `<job>/_run` with a random token when an
 * attempt starts (`initialize`), and reads it back before each `_metadata` it commits. A second
 * writer of the same job (a stale job master, a second `weir run` with the same job id) that
 * started later has replaced the token, so the earlier one stops committing: on a server without
 * conditional writes this is what keeps two runs from both completing checkpoints into one prefix.
 * The host and pid are written for people; the token is what is compared.
 */
import { hostname } from 'node:os';
import { StorageError } from '../../core/errors.ts';
import { runOwnerPath } from '../paths.ts';
import type { S3Objects } from './objects.ts';
import { randomSuffix } from './state-objects.ts';

interface RunMarker {
  readonly token: string;
  readonly host: string;
  readonly pid: number;
}

/** Claims `jobDir` for a new run; returns its token. */
export async function claimRun(objects: S3Objects, jobDir: string): Promise<string> {
  const marker: RunMarker = { token: randomSuffix(), host: hostname(), pid: process.pid };
  await objects.put(runOwnerPath(jobDir), Buffer.from(`${JSON.stringify(marker)}\n`));
  return marker.token;
}

/** Throws STORAGE_IO naming the marker unless `jobDir` is still claimed by the run holding `token`. */
export async function checkRunClaim(objects: S3Objects, jobDir: string, token: string): Promise<void> {
  const url = runOwnerPath(jobDir);
  let marker: Partial<RunMarker> = {};
  try {
    marker = JSON.parse(new TextDecoder().decode((await objects.get(url, 'run marker')).bytes)) as Partial<RunMarker>;
  } catch (err) {
    if (!(err instanceof SyntaxError) && !(err instanceof StorageError && err.code === 'MISSING_FILE')) throw err;
  }
  if (marker.token !== token) {
    const who = typeof marker.host === 'string' ? ` (now host ${marker.host}, pid ${marker.pid})` : '';
    throw new StorageError('STORAGE_IO', url, `another run took over this job's checkpoints${who}; this run commits no more checkpoints`);
  }
}
