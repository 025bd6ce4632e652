/**
 * `weir list`: this user's jobs running under `weir run`, from the job registry, each with the
 * state its control endpoint reports, and standby job masters (state STANDBY) with the leader they
 * wait for. Entries whose `weir run` process is gone are removed.
 */
import { errorMessage } from '../core/errors.ts';
import { callControl } from './control-client.ts';
import { EXIT_OK } from './exit.ts';
import { oneLine, renderTable } from './format.ts';
import { isProcessAlive, listJobs, registryDir, removeStaleEntry, type RegisteredHa, type RegisteredJob } from './job-registry.ts';

export interface ListFlags {
  readonly json?: boolean;
}

/** One running job as `weir list` shows it. */
export interface ListedJob {
  readonly jobId: string;
  readonly name: string | null;
  /** The job status its endpoint reported (RUNNING, RESTARTING, ...), or UNREACHABLE with the reason. */
  readonly state: string;
  readonly error?: string;
  readonly address: string;
  readonly pid: number;
  readonly module: string;
  readonly startedAt: string;
  /** With high availability: leader or standby, the job's name in the store, the (awaited) leader and its epoch. */
  readonly ha?: RegisteredHa;
}

/** The HA column: who leads, with which epoch. */
function haColumn(ha: RegisteredHa | undefined): string {
  if (ha === undefined) return '-';
  return ha.role === 'leader' ? `leads '${ha.job}' (epoch ${ha.epoch})` : `standby of '${ha.job}', led by ${ha.leader ?? '?'} (epoch ${ha.epoch})`;
}

export async function listCommand(flags: ListFlags): Promise<number> {
  const live: RegisteredJob[] = [];
  for (const entry of listJobs()) {
    if (isProcessAlive(entry.pid)) live.push(entry);
    else removeStaleEntry(entry.jobId);
  }
  const jobs = await Promise.all(live.map(describe));
  if (flags.json) process.stdout.write(`${JSON.stringify(jobs, null, 2)}\n`);
  else if (jobs.length === 0) process.stderr.write(`no running jobs (registry: ${registryDir()})\n`);
  else
    process.stdout.write(
      renderTable(
        ['JOB', 'NAME', 'STATE', 'CONTROL', 'STARTED', 'HA'],
        jobs.map((j) => [j.jobId, j.name ?? '-', j.state, j.address, j.startedAt, haColumn(j.ha)]),
      ),
    );
  return EXIT_OK;
}

async function describe(entry: RegisteredJob): Promise<ListedJob> {
  const base = {
    jobId: entry.jobId,
    name: entry.name ?? null,
    address: entry.address,
    pid: entry.pid,
    module: entry.module,
    startedAt: entry.startedAt,
    ...(entry.ha === undefined ? {} : { ha: entry.ha }),
  };
  // A standby runs no job yet: nothing to ask.
  if (entry.ha?.role === 'standby') return { ...base, state: 'STANDBY' };
  try {
    const status = await callControl({ address: entry.address, token: entry.token, label: `job ${entry.jobId}` }, 'GET', '/status');
    return { ...base, state: typeof status.status === 'string' ? status.status : 'UNKNOWN' };
  } catch (err) {
    return { ...base, state: 'UNREACHABLE', error: oneLine(errorMessage(err)) };
  }
}
