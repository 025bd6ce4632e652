/**
 * A standby's entry in the job registry, so `weir list` shows it (state STANDBY, the job, the
 * leader it waits for and its epoch) while no job runs in it: written whenever the leader it sees
 * changes, removed when it leads (the job's own entry follows) or exits.
 */
import { systemClock } from '../core/adapters.ts';
import type { HaRole } from '../web/health.ts';
import { isoTime } from './format.ts';
import { newControlToken, registerJob, unregisterJob } from './job-registry.ts';

/** Keeps this process's standby entry in step with its role; `close` removes it. */
export class StandbyEntry {
  private readonly id = `standby-${process.pid}`;
  private readonly startedAt = isoTime(systemClock.wallNow());
  private written = false;
  private readonly onExit = (): void => unregisterJob(this.id);

  constructor(
    private readonly job: { readonly path: string; readonly name: string },
    /** The web port's address (`/ha`, `/readyz`), or null: none bound. */
    private readonly webAddress: string | null,
  ) {}

  /** Writes the entry for a standby role; any other role removes it. A registry that cannot be written leaves the standby unlisted, nothing more. */
  update(role: HaRole): void {
    if (role.role !== 'standby') {
      this.close();
      return;
    }
    try {
      registerJob({
        jobId: this.id,
        name: this.job.name,
        address: this.webAddress ?? '-',
        // A standby takes no control requests: the token guards nothing, but every entry has one.
        token: newControlToken(),
        pid: process.pid,
        module: this.job.path,
        startedAt: this.startedAt,
        ha: { role: 'standby', job: role.job, epoch: role.epoch, leader: role.leader, store: role.store },
      });
      if (!this.written) process.on('exit', this.onExit);
      this.written = true;
    } catch {
      // Listing is a convenience: the standby waits all the same.
    }
  }

  close(): void {
    if (!this.written) return;
    this.written = false;
    unregisterJob(this.id);
    process.off('exit', this.onExit);
  }
}
