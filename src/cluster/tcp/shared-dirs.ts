/**
 * Directories every host must see as one: until object storage, task managers on other hosts write
 * checkpoints into a directory the job master reads (`_metadata`, restores), and FileSink output
 * into a directory the job master reads for the sink-aware recovery rule (`newestCommitted`,
 * roll-backs). A directory that is local on each host (no network file system mounted there) would
 * let every host write its own files unseen by the others: checkpoints the job master cannot find
 * and output it cannot roll back.
 *
 * So the job master plants a probe in each such directory (a file named for the job, holding a
 * random token, fsynced) before it accepts task managers, the submission names the probes, and a
 * task manager reads them before it builds the job: a probe missing or with another token means
 * "not the same directory" and it refuses to run, naming the directory and what it is for. The
 * probes are removed when the job master ends. The decisions are pure; file I/O stays in the three
 * small functions at the edge.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { ClusterError, errorMessage } from '../../core/errors.ts';

/** A directory the job master and every task manager must share, and the probe planted in it. */
export interface SharedDirProbe {
  /** What the directory is for, for messages: `checkpoint directory`, `directory of FileSink 'out'`. */
  readonly what: string;
  /** Absolute path, as the job master resolved it (task managers read the same path). */
  readonly dir: string;
  /** The probe's file name inside `dir`. */
  readonly file: string;
  /** The random token the probe holds. */
  readonly token: string;
}

/** The probe's file name for job `jobId`: hidden, and apart from the names FileSink and checkpoints use. */
export function probeFileName(jobId: string): string {
  return `.weir-shared-${jobId}`;
}

/**
 * Plants a probe in each directory (which must exist and be writable: the job master's preflight
 * checked that). Throws the file system's error, naming the directory.
 */
export function plantSharedDirProbes(dirs: ReadonlyArray<{ readonly what: string; readonly dir: string }>, jobId: string): SharedDirProbe[] {
  const file = probeFileName(jobId);
  return dirs.map(({ what, dir }) => {
    const abs = path.resolve(dir);
    const token = randomBytes(16).toString('hex');
    const fd = openSync(path.join(abs, file), 'w');
    try {
      writeSync(fd, token);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return { what, dir: abs, file, token };
  });
}

/** What a task manager found at a probe: its content, or the error reading it. */
export type ProbeReading = { readonly found: string } | { readonly error: string };

/** The problem with one probe as read (a pure decision), or null when it is the job master's. */
export function probeProblem(probe: SharedDirProbe, reading: ProbeReading): string | null {
  if ('error' in reading)
    return `the ${probe.what} ${probe.dir} is not the directory the job master wrote to (its probe ${probe.file} cannot be read here: ${reading.error})`;
  if (reading.found !== probe.token)
    return `the ${probe.what} ${probe.dir} is not the directory the job master wrote to (its probe ${probe.file} holds another job master's token)`;
  return null;
}

/**
 * Reads every probe on this host; throws ClusterError (CLUSTER_REFUSED, naming the job master) when
 * one is not there: every host must see the same directory (a network file system), until S3.
 */
export function checkSharedDirProbes(probes: readonly SharedDirProbe[], jobMaster: string): void {
  const problems = probes.flatMap((probe) => {
    let reading: ProbeReading;
    try {
      reading = { found: readFileSync(path.join(probe.dir, probe.file), 'utf8') };
    } catch (err) {
      reading = { error: errorMessage(err) };
    }
    const problem = probeProblem(probe, reading);
    return problem === null ? [] : [problem];
  });
  if (problems.length > 0)
    throw new ClusterError(
      'CLUSTER_REFUSED',
      jobMaster,
      `cannot run this job here: ${problems.join('; ')}. Task managers on several hosts need checkpoint and FileSink directories that every host sees at the same path (a network file system)`,
    );
}

/** Removes the probes (best effort: a directory gone meanwhile is not an error). */
export function removeSharedDirProbes(probes: readonly SharedDirProbe[]): void {
  for (const p of probes) {
    try {
      unlinkSync(path.join(p.dir, p.file));
    } catch {
      // gone already
    }
  }
}
