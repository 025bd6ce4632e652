/**
 * Health of a job master process for a cluster manager (Kubernetes probes) and for people:
 * `GET /healthz` (the process answers: alive), `GET /readyz` (it leads, or runs without HA, and
 * its job is RUNNING) and `GET /ha` (its part in high availability: a standby names the leader it
 * waits for and that leader's epoch). A standby serves these before any job runs on it (from
 * `openWebListener`), the job's web server after; a leader's `/ha` lists the standbys the store
 * knows (each renewed at its polls). The store is shown by its description: a URL's password never appears.
 */
import type { StandbyEntry } from '../cluster/ha/ha-store.ts';
import type { HaStatus } from './rest/responses.ts';

/** What this process is for its job's high availability. */
export type HaRole =
  /** No HA: this process runs the job on its own. */
  | { readonly role: 'single' }
  /** Connecting to the HA store, or not yet elected or refused. */
  | { readonly role: 'starting' }
  | { readonly role: 'standby'; readonly job: string; readonly leader: string; readonly epoch: number; readonly store: string }
  | {
      readonly role: 'leader';
      readonly job: string;
      readonly epoch: number;
      readonly store: string;
      /** The standbys the store listed at the leader's last look (refreshed every few seconds). */
      readonly standbys?: readonly StandbyEntry[];
    };

/** A health route's answer: the HTTP status and the JSON body. */
export interface HealthAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** `GET /ha`'s body (Flink's dashes for multi-word keys, as the REST API). */
function haBody(role: HaRole): HaStatus {
  switch (role.role) {
    case 'single':
    case 'starting':
      return { role: role.role };
    case 'standby':
      return { role: 'standby', job: role.job, leader: role.leader, 'leader-epoch': role.epoch, store: role.store };
    case 'leader':
      return {
        role: 'leader',
        job: role.job,
        'leader-epoch': role.epoch,
        store: role.store,
        standbys: (role.standbys ?? []).map((w) => ({ holder: w.holder, address: w.address, 'seen-ms-ago': w.seenMsAgo })),
      };
  }
}

/**
 * The answer of a health route at `pathname`, or null when it is none. `jobStatus`: the status of
 * the job this process runs (RUNNING, RESTARTING, ...), or null when none runs here.
 */
export function healthAnswer(pathname: string, role: HaRole, jobStatus: string | null): HealthAnswer | null {
  switch (pathname) {
    case '/healthz':
      return { status: 200, body: { status: 'alive' } };
    case '/readyz': {
      const leads = role.role === 'single' || role.role === 'leader';
      const ready = leads && jobStatus === 'RUNNING';
      const why = !leads
        ? `this job master is ${role.role === 'standby' ? `a standby (job '${role.job}' is led by ${role.leader})` : 'starting'}`
        : `the job is ${jobStatus ?? 'not started'}`;
      return {
        status: ready ? 200 : 503,
        body: { ready, ...(ready ? {} : { reason: why }), ...haBody(role), ...(jobStatus === null ? {} : { 'job-status': jobStatus }) },
      };
    }
    case '/ha':
      return { status: 200, body: haBody(role) };
    default:
      return null;
  }
}
