/**
 * `weir run <job> --ha <url>`: job master high availability. Every process started so competes
 * for the job's lease in the HA store (PostgreSQL); one leads, the others wait as standbys and say
 * who leads. The leader runs the job from the newest checkpoint the store's pointer names (the
 * checkpoint its predecessor published; `--from` only when there is none), publishes each completed
 * checkpoint before any subtask hears of it, and renews its lease. When it loses the lease (a
 * renewal refused, or none succeeding before its local deadline) it ends the process at once: it
 * commits nothing more, and a standby restores from the newest published checkpoint. SIGTERM or
 * Ctrl-C makes a leader step down (the job is not over: a standby takes over at once); `weir
 * cancel` or `weir stop` end the job. When the job ends (finished, cancelled, failed, stopped with a
 * savepoint), the leader ends the lease and removes the pointer, and the standbys that watched the
 * job exit; a later `weir run --ha` of an ended job runs nothing unless `--ha-new-run` (a cluster
 * manager restarting its process must not run a finished job again from the start).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { realEnvironment } from '../core/adapters.ts';
import { errorMessage } from '../core/errors.ts';
import type { HaStore } from '../cluster/ha/ha-store.ts';
import { elect, type Leadership } from '../cluster/ha/leadership.ts';

/** Default lease of a leader (milliseconds); renewed three times per lease. */
export const DEFAULT_LEASE_MS = 10_000;

export interface HaFlags {
  /** The HA store's URL (`postgres://user@host:port/db`). */
  readonly ha?: string;
  /** The job's name in the HA store (default: the job module's name). */
  readonly haJob?: string;
  /** Milliseconds of a leader's lease. */
  readonly haLease?: number;
  /** Run the job again although the HA store says it ended. */
  readonly haNewRun?: boolean;
}

/** A leader's part of the run: what to restore, the hook the job master publishes through, and the end. */
export interface HaLeader {
  readonly leadership: Leadership;
  /** The pointer's checkpoint, to restore from; null: none was published (start as without HA). */
  readonly takeOverFrom: string | null;
  /** The job ended for good: end the lease and remove the pointer. */
  finish(): Promise<void>;
  /**
   * This job master stops but the job is not over (SIGTERM from a cluster manager, Ctrl-C): it acts
   * no more, gives the lease up at once and keeps the pointer, so a standby takes over without
   * waiting out the lease.
   */
  stepDown(): Promise<void>;
}

/** Opens the store (PostgreSQL, loaded only when HA is asked for). @throws HaError naming the URL when unreachable. */
async function openStore(url: string): Promise<HaStore> {
  const { PostgresHaStore } = await import('../cluster/ha/postgres-ha-store.ts');
  return PostgresHaStore.open(url);
}

/**
 * Waits until this process leads the job, or the job it watched ended (null). `log` gets the lines
 * a person reads: who leads while this one waits, and what it takes over from.
 */
export async function becomeLeader(flags: HaFlags & { readonly ha: string }, jobName: string, log: (line: string) => void): Promise<HaLeader | null> {
  const store = await openStore(flags.ha);
  const env = realEnvironment();
  const job = flags.haJob ?? jobName;
  const holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const leaseMs = flags.haLease ?? DEFAULT_LEASE_MS;
  const elected = await elect(store, { job, holder, leaseMs, address: null, takeEnded: flags.haNewRun === true }, env, (leader) =>
    log(`standby: job '${job}' is led by ${leader.holder} (epoch ${leader.epoch}) in ${store.description}; waiting to take over`),
  );
  if (elected === 'ended') {
    await store.close();
    log(`job '${job}' has ended (its last leader finished it); nothing to run (--ha-new-run runs it again from the start)`);
    return null;
  }
  const pointer = await store.latest(job);
  log(
    `leading job '${job}' as ${holder} (epoch ${elected.epoch}, lease ${leaseMs} ms)` +
      (pointer === null ? '' : `; taking over from checkpoint ${pointer.checkpointId} at ${pointer.location}`),
  );
  elected.onLost((error) => {
    // Nothing of this process may act for the job any more: no checkpoint completes (the store
    // refuses its pointer), and the subtasks stop with the process.
    process.stderr.write(`weir run: ${error.message}; stopping this job master at once (the new leader restores from the newest published checkpoint)\n`);
    process.exit(1);
  });
  elected.start();
  return {
    leadership: elected,
    takeOverFrom: pointer?.location ?? null,
    stepDown: async () => {
      elected.stop();
      try {
        await store.release(job, holder, elected.epoch);
      } catch (err) {
        log(`could not give up the lease of job '${job}' in ${store.description} (a standby takes over when it runs out): ${errorMessage(err)}`);
      }
      await store.close();
    },
    finish: async () => {
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
