/**
 * Job master high availability, the election flow every way of running a job shares (`weir run
 * --ha <url>`, a job module's `highAvailability` option, `StreamEnvironment.execute` with it).
 * Every job master so started competes for the job's lease in the HA store (PostgreSQL or etcd); one
 * leads, the others wait as standbys and say who leads. The leader runs the job from the newest
 * checkpoint the store's pointer names (the checkpoint its predecessor published), publishes each
 * completed checkpoint before any subtask hears of it, and renews its lease. When it loses the
 * lease (a renewal refused, or none succeeding before its local deadline) `onLost` is told: it must
 * act no more (the CLI ends the process), and a standby restores from the newest published
 * checkpoint. A leader that stops while the job goes on steps down (gives the lease up, keeps the
 * pointer); one whose job ended finishes it (lease and pointer go), and the standbys that watched
 * it exit; a later run of an ended job runs nothing unless `newRun`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { realEnvironment } from '../../core/adapters.ts';
import { errorMessage, type HaError } from '../../core/errors.ts';
import type { CheckpointPointer, LeaseHolder, StandbyEntry } from './ha-store.ts';
import { openHaStore } from './open-ha-store.ts';
import { moduleChangeNote, type OwnSubmission, submissionMismatch } from './ha-submission.ts';
import { elect, type Leadership } from './leadership.ts';

/** Where and how a job master competes for a job's leadership. */
export interface HaSettings {
  /** The HA store's URL (`postgres://user@host:port/db`); it may carry a password, never printed. */
  readonly url: string;
  /** The job's name in the HA store. */
  readonly job: string;
  /** Milliseconds of a leader's lease. */
  readonly leaseMs: number;
  /** Run the job again although the HA store says it ended. */
  readonly newRun: boolean;
  /** While a standby, be listed in the store with this address for people (the web address), or null; absent: not listed. */
  readonly listAsStandby?: { readonly address: string | null };
}

/** A leader's part of the run: what to restore, the hook the job master publishes through, and the end. */
export interface HaLeader {
  readonly leadership: Leadership;
  /** The job's name in the store. */
  readonly job: string;
  /** The store for people (its URL without the password). */
  readonly store: string;
  /** The pointer's checkpoint, to restore from; null: none was published (start as without HA). */
  readonly takeOverFrom: string | null;
  /** The published checkpoints, newest first (the pointer's, then the ones to fall back on); empty: none. */
  readonly published: readonly CheckpointPointer[];
  /** The job ended for good: end the lease and remove the pointer (after `stepDown`: nothing more, the job goes on under a standby). */
  finish(): Promise<void>;
  /** The standbys the store lists for the job now (empty when it cannot be asked). */
  standbys(): Promise<readonly StandbyEntry[]>;
  /**
   * This job master stops but the job is not over (SIGTERM from a cluster manager, Ctrl-C): it acts
   * no more, gives the lease up at once and keeps the pointer, so a standby takes over without
   * waiting out the lease. Called again, it returns the first call's promise.
   */
  stepDown(): Promise<void>;
}

/**
 * Waits until this process leads the job, or the job it watched ended (null). `log` gets the lines
 * a person reads (who leads while this one waits, what it takes over from); `onLost` is called once
 * if the leadership is lost while the job runs. `own` is the job this process built: it must be
 * the job the store records (if any) before it stands by and once it leads; the leader records it.
 * @throws HaError (HA_JOB_MISMATCH) when the store records another job graph under this name.
 */
export async function becomeLeader(
  settings: HaSettings,
  own: OwnSubmission,
  log: (line: string) => void,
  onLost: (error: HaError) => void,
  onStandby: (leader: LeaseHolder, store: string) => void = () => {},
): Promise<HaLeader | null> {
  const store = await openHaStore(settings.url);
  const env = realEnvironment();
  const { job, leaseMs } = settings;
  const holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const refusal = submissionMismatch(job, store.description, own, await store.submission(job));
  if (refusal !== null) {
    await store.close();
    throw refusal;
  }
  const elected = await elect(
    store,
    {
      job,
      holder,
      leaseMs,
      address: null,
      takeEnded: settings.newRun,
      ...(settings.listAsStandby === undefined ? {} : { listAsStandby: settings.listAsStandby }),
    },
    env,
    (leader) => {
      log(`standby: job '${job}' is led by ${leader.holder} (epoch ${leader.epoch}) in ${store.description}; waiting to take over`);
      onStandby(leader, store.description);
    },
    (err) => log(`standby: the HA store ${store.description} did not answer (${errorMessage(err)}); asking again`),
  );
  if (elected === 'ended') {
    await store.close();
    log(`job '${job}' has ended (its last leader finished it); nothing to run (--ha-new-run runs it again from the start)`);
    return null;
  }
  // Again under the lease: the record may have changed while this one waited.
  const before = await store.submission(job);
  const changed = submissionMismatch(job, store.description, own, before);
  if (changed !== null) {
    elected.stop();
    await store.release(job, holder, elected.epoch).catch(() => {});
    await store.close();
    throw changed;
  }
  const note = moduleChangeNote(job, own, before);
  if (note !== null) log(note);
  await store.submit(job, elected.epoch, own);
  const pointer = await store.latest(job);
  // The pointer first, then the older published ones (a list written before the pointer's
  // checkpoint could lag behind it, never run ahead: both are written in one statement).
  const published = pointer === null ? [] : [pointer, ...(await store.published(job)).filter((p) => p.checkpointId < pointer.checkpointId)];
  log(
    `leading job '${job}' as ${holder} (epoch ${elected.epoch}, lease ${leaseMs} ms)` +
      (pointer === null ? '' : `; taking over from checkpoint ${pointer.checkpointId} at ${pointer.location}`),
  );
  elected.onLost(onLost);
  elected.start();
  /** Set by the first `stepDown`: the job goes on under a standby, so nothing after it may end the job. */
  let steppingDown: Promise<void> | null = null;
  return {
    leadership: elected,
    job,
    store: store.description,
    takeOverFrom: pointer?.location ?? null,
    published,
    standbys: () => store.standbys(job).catch(() => []),
    stepDown: () =>
      (steppingDown ??= (async () => {
        elected.stop();
        try {
          await store.release(job, holder, elected.epoch);
        } catch (err) {
          log(`could not give up the lease of job '${job}' in ${store.description} (a standby takes over when it runs out): ${errorMessage(err)}`);
        }
        await store.close();
      })()),
    finish: async () => {
      // A job that fails while its leader steps down (a checkpoint's publication refused) is not over either.
      if (steppingDown !== null) return steppingDown;
      const deposed = elected.deposed;
      elected.stop();
      // A deposed leader's job is not over: the next leader runs it (and the store refuses the end anyway).
      if (deposed) return store.close();
      try {
        await store.finish(job, holder, elected.epoch);
      } catch (err) {
        log(`could not end the lease of job '${job}' in ${store.description}: ${errorMessage(err)}`);
      }
      await store.close();
    },
  };
}
