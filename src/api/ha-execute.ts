/**
 * `StreamEnvironment.execute` of a job whose options ask for high availability
 * (`highAvailability: { type: 'postgres', url }`): this process waits as a standby until it leads
 * the job, runs it from the checkpoint the HA store's pointer names, publishes each completed
 * checkpoint before any subtask commits it, and ends the lease with the job. A leadership lost
 * while the job runs fails the job with `HA_LEADERSHIP_LOST` (nothing more commits, nothing is
 * deleted: the new leader restores what the store names). The CLI runs the same election itself
 * (`weir run`, where a lost leadership ends the process).
 */
import { HaError } from '../core/errors.ts';
import { becomeLeader, type HaSettings } from '../cluster/ha/ha-leader.ts';
import type { OwnSubmission } from '../cluster/ha/ha-submission.ts';
import { hashOfLocalModule } from '../cluster/job-code/code-cache.ts';
import { fingerprintOf } from '../cluster/job-master/graph-fingerprint.ts';
import type { JobGraph } from '../graph/job-graph.ts';
import { describeHaUrl } from '../cluster/ha/ha-url.ts';
import type { JobMaster } from '../cluster/job-master/job-master.ts';
import type { InternalRunOptions, JobClient } from './environment.ts';
import type { ResolvedHighAvailability, ResolvedOptions } from './options.ts';
import { publishingLeader } from './ha-earlier-leaders.ts';

/** The HA settings a job named `name` runs with under `option`, or null without HA. */
export function haSettingsOf(option: ResolvedHighAvailability, name: string): HaSettings | null {
  if (option.type === 'none') return null;
  return { url: option.url, job: option.job ?? name, leaseMs: option.leaseMs, newRun: false, listAsStandby: { address: null } };
}

/** The job this process built, as the HA store records it: the graph's shape and the module bundle's hash (null: a job built in code). */
export async function ownSubmission(graph: JobGraph, modulePath: string | null): Promise<OwnSubmission> {
  return { graph: fingerprintOf(graph), moduleHash: modulePath === null ? null : await hashOfLocalModule(modulePath) };
}

/**
 * Runs `start` once this process leads the job of `settings`.
 * @throws HaError (HA_UNREACHABLE) when the store cannot be reached; (HA_JOB_ENDED) when the job
 * ended in the store (before, or while this process waited as a standby); (HA_JOB_MISMATCH) when the
 * store records another job graph under this name.
 */
export async function executeLed(
  settings: HaSettings,
  own: OwnSubmission,
  options: ResolvedOptions,
  run: InternalRunOptions,
  start: (run: InternalRunOptions) => Promise<JobClient>,
): Promise<JobClient> {
  const log = (message: string): void => run.onEvent?.({ type: 'log', message });
  let master: JobMaster | null = null;
  let lostEarly: HaError | null = null;
  const leader = await becomeLeader(settings, own, log, (error) => {
    log(error.message);
    if (master === null) lostEarly = error;
    else master.failGlobal(error);
  });
  if (leader === null) {
    throw new HaError(
      'HA_JOB_ENDED',
      `job '${settings.job}' has ended in the HA store ${describeHaUrl(settings.url)} (its last leader finished it); give highAvailability.job another name to run it again`,
    );
  }
  let client: JobClient;
  try {
    client = await start({
      ...run,
      restoreFrom: leader.takeOverFrom ?? run.restoreFrom,
      ...(leader.published.length === 0 ? {} : { restorePublished: leader.published }),
      leadership: publishingLeader(leader, options, log),
      onJobMaster: (m) => {
        master = m;
        run.onJobMaster?.(m);
        if (lostEarly !== null) m.failGlobal(lostEarly);
      },
    });
  } catch (err) {
    // The job never ran: it is not over, so the lease goes at once and the pointer stays.
    await leader.stepDown();
    throw err;
  }
  // The caller hears of the job's end only once its lease and pointer are gone (or kept, if deposed).
  const result = client.result.then(
    async (r) => {
      await leader.finish();
      return r;
    },
    async (err: unknown) => {
      await leader.finish();
      throw err;
    },
  );
  return { ...client, result };
}
