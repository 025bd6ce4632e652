/**
 * The job a leader runs, as the HA store records it (`HaStore.submit`): a job master compares the
 * job it built with the record before it stands by and again once it holds the lease. The same
 * graph (vertex names, parallelism, operator uids) may take over, whatever its module's hash (a
 * fix that keeps the graph is a normal redeploy, noted in the log); another graph may not: its
 * operators would restore state that is not theirs, or lose it. Upgrading the job's graph under
 * HA goes through its end: `weir stop` (savepoint), then the new module with `--ha-new-run --from
 * <savepoint>`.
 */
import { HaError } from '../../core/errors.ts';
import { graphDifference } from '../job-master/graph-fingerprint.ts';
import type { JobSubmissionRecord } from './ha-store.ts';

/** What a job master built: compared with the store's record, recorded once it leads. */
export type OwnSubmission = Omit<JobSubmissionRecord, 'epoch'>;

/** A short form of a module hash for people. */
function shortHash(hash: string | null): string {
  return hash === null ? 'a job built in code' : `module ${hash.slice(0, 12)}`;
}

/**
 * The refusal when `own` is another job than `recorded` (null: they agree, or nothing is recorded).
 * `store` names the store for people (no password).
 */
export function submissionMismatch(job: string, store: string, own: OwnSubmission, recorded: JobSubmissionRecord | null): HaError | null {
  if (recorded === null) return null;
  const difference = graphDifference(own.graph, recorded.graph, `the job in the HA store`);
  if (difference === null) return null;
  return new HaError(
    'HA_JOB_MISMATCH',
    `job '${job}' in the HA store ${store} runs another job graph than this process built (recorded by epoch ${recorded.epoch}, ${shortHash(recorded.moduleHash)}; this process: ${shortHash(own.moduleHash)}): ${difference}; a standby must run the same job. To change the job, end it (weir stop with a savepoint) and start the new one with --ha-new-run --from <savepoint>, or give it another HA job name`,
  );
}

/** A note when the record's module differs but its graph is the same (a redeploy of compatible code), else null. */
export function moduleChangeNote(job: string, own: OwnSubmission, recorded: JobSubmissionRecord | null): string | null {
  if (recorded === null || recorded.moduleHash === own.moduleHash) return null;
  return `job '${job}': the job module differs from the one epoch ${recorded.epoch} ran (${shortHash(recorded.moduleHash)}, now ${shortHash(own.moduleHash)}); it builds the same job graph, so it takes over`;
}
