/**
 * `weir run <job> --ha <url>` and a job module's `highAvailability` option: which HA settings the
 * run competes with (the flags win over the option, field by field), and what the CLI does when
 * the leadership is lost: it ends the process at once (the election flow itself is
 * `cluster/ha/ha-leader.ts`).
 */
import type { ResolvedHighAvailability } from '../api/options.ts';
import { becomeLeader, type HaLeader, type HaSettings } from '../cluster/ha/ha-leader.ts';
import type { OwnSubmission } from '../cluster/ha/ha-submission.ts';
import type { StandbyEntry } from '../cluster/ha/ha-store.ts';
import { DEFAULT_HA_LEASE_MS } from '../api/options/high-availability.ts';
import { UsageError } from './exit.ts';
import type { HaRole } from '../web/health.ts';

export interface HaFlags {
  /** The HA store's URL (`postgres://user@host:port/db` or `etcd://host:port`). */
  readonly ha?: string;
  /** The job's name in the HA store (default: the option's, else the job module's name). */
  readonly haJob?: string;
  /** Milliseconds of a leader's lease. */
  readonly haLease?: number;
  /** Run the job again although the HA store says it ended. */
  readonly haNewRun?: boolean;
}

/** The settings of this run: `--ha` and its companions over the module's option; null without HA. */
export function cliHaSettings(flags: HaFlags, option: ResolvedHighAvailability, jobName: string): HaSettings | null {
  const fromOption = option.type === 'none' ? null : option;
  const url = flags.ha ?? fromOption?.url;
  if (url === undefined) {
    const stray = flags.haJob !== undefined ? '--ha-job' : flags.haLease !== undefined ? '--ha-lease' : flags.haNewRun === true ? '--ha-new-run' : null;
    if (stray !== null) throw new UsageError(`${stray} applies with high availability: give --ha <url> (or the job's highAvailability option)`);
    return null;
  }
  return {
    url,
    job: flags.haJob ?? fromOption?.job ?? jobName,
    leaseMs: flags.haLease ?? fromOption?.leaseMs ?? DEFAULT_HA_LEASE_MS,
    newRun: flags.haNewRun === true,
  };
}

/**
 * Waits until this process leads (null: the job ended); a lost leadership ends the process. While
 * it waits, `onRole` hears who leads (the web port's `/ha` and `/readyz`, `weir list`).
 */
export function becomeCliLeader(
  settings: HaSettings,
  own: OwnSubmission,
  log: (line: string) => void,
  onRole: (role: HaRole) => void,
): Promise<HaLeader | null> {
  onRole({ role: 'starting' });
  return becomeLeader(
    settings,
    own,
    log,
    (error) => {
      // Nothing of this process may act for the job any more: no checkpoint completes (the store
      // refuses its pointer), and the subtasks stop with the process.
      process.stderr.write(`weir run: ${error.message}; stopping this job master at once (the new leader restores from the newest published checkpoint)\n`);
      process.exit(1);
    },
    (leader, store) => onRole({ role: 'standby', job: settings.job, leader: leader.holder, epoch: leader.epoch, store }),
  );
}

/** The role of a process that leads. */
export function leaderRole(leader: HaLeader, standbys?: readonly StandbyEntry[]): HaRole {
  return { role: 'leader', job: leader.job, epoch: leader.leadership.epoch, store: leader.store, ...(standbys === undefined ? {} : { standbys }) };
}
