/**
 * A job master's leadership through an HA store: the election (standby until the lease is free),
 * the renewals, and the local deadline after which the leader must consider itself deposed.
 *
 * The store's lease runs on the server's clock from the moment it executed a renewal, which is
 * after this side sent it. So the leader counts its lease from when it *sent* the last renewal
 * that succeeded, minus a margin for the two clocks' rates (`LEASE_MARGIN`): its deadline always
 * falls before the store's expiry, and it stops triggering and committing before anyone else can
 * take the lease. A renewal the store refuses (another epoch, or the lease expired) deposes it at
 * once; a store that does not answer deposes it at the deadline. Checkpoint pointers are published
 * only while the lease is valid here and live in the store (`HaStore.publish` checks the epoch),
 * which is the fence: a stale leader cannot make a checkpoint complete, so no sink commits for it.
 *
 * Time comes from the Clock/Scheduler seam.
 */
import { HaError } from '../../core/errors.ts';
import type { Cancellable, Environment } from '../../core/time.ts';
import type { HaStore, LeaseHolder } from './ha-store.ts';

/** The share of the lease kept as a margin against clock-rate differences (at least `MIN_MARGIN_MS`, at most half the lease). */
export const LEASE_MARGIN = 0.2;
const MIN_MARGIN_MS = 50;
/** Renewals per lease period (and polls per lease period of a standby). */
export const RENEWALS_PER_LEASE = 3;

/** Until when a lease renewed by a request sent at `sentMs` is valid here (a pure decision). */
export function localDeadline(sentMs: number, leaseMs: number): number {
  return sentMs + leaseMs - Math.min(leaseMs / 2, Math.max(MIN_MARGIN_MS, leaseMs * LEASE_MARGIN));
}

export interface LeadershipSettings {
  readonly job: string;
  /** This job master's candidate id. */
  readonly holder: string;
  readonly leaseMs: number;
  /** Where task managers reach this job master, or null. */
  readonly address: string | null;
  /** Take the lease of an ended job (run it again); otherwise an ended job is reported as 'ended'. */
  readonly takeEnded?: boolean;
  /**
   * While it waits, list this job master among the job's standbys in the store (at each poll, for
   * one lease), with the address people reach it at (its web address, or null); absent: not listed.
   */
  readonly listAsStandby?: { readonly address: string | null };
}

/**
 * Waits until this job master holds the lease of `settings.job` (a Leadership, still to be
 * started), or until the job has ended ('ended': it ended before, and `takeEnded` is not set, or
 * it ended while this one watched it as a standby); `onStandby` is told who leads
 * whenever that changes. A standby's poll that fails (the store restarting) is asked again at the
 * next poll; the first one's failure is thrown.
 */
export async function elect(
  store: HaStore,
  settings: LeadershipSettings,
  env: Environment,
  onStandby: (leader: LeaseHolder) => void,
  /** A standby's poll the store did not answer (it polls again). */
  onUnreachable?: (error: unknown) => void,
): Promise<Leadership | 'ended'> {
  let seen: string | null = null;
  let watched = false;
  for (;;) {
    const sentMs = env.clock.now();
    let r: Awaited<ReturnType<HaStore['acquire']>>;
    try {
      r = await store.acquire(settings.job, settings.holder, settings.leaseMs, settings.address, settings.takeEnded === true && !watched);
    } catch (err) {
      // A standby outlives a store that stops answering for a while (a restart, a cut): it asks
      // again at its next poll. Only the first answer must come (an unreachable store at the start
      // is one clear error).
      if (!watched) throw err;
      onUnreachable?.(err);
      await new Promise<void>((resolve) => env.scheduler.schedule(settings.leaseMs / RENEWALS_PER_LEASE, resolve));
      continue;
    }
    if (r.held) {
      if (watched) await unlist(store, settings);
      return new Leadership(store, settings, r.epoch, localDeadline(sentMs, settings.leaseMs), env);
    }
    if (r.leader.holder === '') {
      if (watched) await unlist(store, settings);
      return 'ended';
    }
    watched = true;
    // Being listed is for people (weir list, the leader's /ha and dashboard): a store that does not answer now is asked at the next poll.
    if (settings.listAsStandby !== undefined)
      await store.standBy(settings.job, settings.holder, settings.listAsStandby.address, settings.leaseMs).catch(() => {});
    const key = `${r.leader.holder}/${r.leader.epoch}`;
    if (key !== seen) {
      seen = key;
      onStandby(r.leader);
    }
    await new Promise<void>((resolve) => env.scheduler.schedule(settings.leaseMs / RENEWALS_PER_LEASE, resolve));
  }
}

/** This job master waits no more: off the store's list of standbys (when it was listed). */
async function unlist(store: HaStore, settings: LeadershipSettings): Promise<void> {
  if (settings.listAsStandby !== undefined) await store.leaveStandby(settings.job, settings.holder).catch(() => {});
}

export class Leadership {
  /** Until when this side may act without asking the store (the local deadline). */
  private validUntilMs: number;
  /** When the last renewal that succeeded (or the acquire) was sent: the store's lease runs at least to this + leaseMs. */
  private lastOkSentMs: number;
  private timer: Cancellable | null = null;
  private deadline: Cancellable | null = null;
  private lostReason: string | null = null;
  private readonly lostHandlers: Array<(error: HaError) => void> = [];
  /** The renewal in flight, if any. */
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly store: HaStore,
    readonly settings: LeadershipSettings,
    readonly epoch: number,
    validUntilMs: number,
    private readonly env: Environment,
  ) {
    this.validUntilMs = validUntilMs;
    this.lastOkSentMs = validUntilMs - localDeadline(0, settings.leaseMs);
  }

  /** Whether this job master may act as the leader now without asking the store (its local deadline has not passed, nothing deposed it). */
  get valid(): boolean {
    return this.lostReason === null && this.env.clock.now() < this.validUntilMs;
  }

  /** Called once when the leadership is lost (not after `stop`). */
  onLost(handler: (error: HaError) => void): void {
    this.lostHandlers.push(handler);
  }

  /** Starts renewing. */
  start(): void {
    this.armDeadline();
    this.scheduleRenewal();
  }

  /**
   * Publishes a completed checkpoint under this epoch: resolves once the store holds it. Past the
   * local deadline it first waits for a renewal to say whether the lease still holds.
   * @throws HaError (HA_LEADERSHIP_LOST) when this job master is no longer the leader; it is then deposed.
   */
  async publish(checkpointId: number, location: string): Promise<void> {
    for (;;) {
      if (this.lostReason !== null) throw this.lostError();
      if (!this.valid) {
        // Past the local deadline: only a renewal the store accepts lets this leader act again;
        // the lease's end (armDeadline) deposes it if none does.
        await this.renew();
        if (this.lostReason !== null) throw this.lostError();
        if (!this.valid) {
          await this.pause();
          continue;
        }
      }
      let ok: boolean;
      try {
        ok = await this.store.publish(this.settings.job, this.epoch, { checkpointId, location });
      } catch {
        // No answer (the store restarted, a network cut): the pointer may or may not have been
        // written, so the checkpoint must neither be given up (its files may be named now) nor
        // counted as complete. Ask again (the write is idempotent) until the store answers or the
        // lease is gone.
        await this.pause();
        continue;
      }
      if (ok) return;
      this.lose(`the HA store refused checkpoint ${checkpointId} of epoch ${this.epoch}: another job master leads`);
      throw this.lostError();
    }
  }

  /** A short wait before asking the store again. */
  private pause(): Promise<void> {
    return new Promise<void>((resolve) => this.env.scheduler.schedule(this.settings.leaseMs / (4 * RENEWALS_PER_LEASE), resolve));
  }

  /** Whether this job master was deposed (not merely stopped). */
  get deposed(): boolean {
    return this.lostReason !== null && this.lostReason !== 'stopped';
  }

  /** Tells task managers that find the leader through the store where to join (`weir taskmanager --ha`). */
  announce(address: string): Promise<void> {
    return this.store.announce(this.settings.job, this.settings.holder, this.epoch, address);
  }

  /** Stops renewing (the job ended or this job master stops); no loss is reported afterwards. */
  stop(): void {
    this.timer?.cancel();
    this.deadline?.cancel();
    this.timer = this.deadline = null;
    if (this.lostReason === null) this.lostReason = 'stopped';
  }

  private lostError(): HaError {
    return new HaError(
      'HA_LEADERSHIP_LOST',
      `job master ${this.settings.holder} lost the leadership of job ${this.settings.job} (epoch ${this.epoch}): ${this.lostReason ?? 'its lease ran out'}`,
    );
  }

  private lose(reason: string): void {
    if (this.lostReason !== null) return;
    this.lostReason = reason;
    this.timer?.cancel();
    this.deadline?.cancel();
    const error = this.lostError();
    for (const h of this.lostHandlers) h(error);
  }

  /**
   * At the local deadline this side stops acting (publish waits) and asks the store at once: this
   * thread may have stood still (a loaded machine) while the lease still holds there. A renewal the
   * store accepts proves it held the lease all along (the store renews only a live lease, and nobody
   * can take a live one), so the leader goes on; one refused deposes it. With no answer by the time
   * the store's lease runs out (`lastOkSentMs + leaseMs`), it is deposed.
   */
  private armDeadline(): void {
    this.deadline?.cancel();
    const now = this.env.clock.now();
    const hardMs = this.lastOkSentMs + this.settings.leaseMs;
    if (now >= hardMs) {
      this.lose(`no renewal succeeded within the lease (${this.settings.leaseMs} ms)`);
      return;
    }
    const soonest = now < this.validUntilMs ? this.validUntilMs : hardMs;
    this.deadline = this.env.scheduler.schedule(Math.max(0, soonest - now), () => {
      if (this.lostReason !== null) return;
      if (this.env.clock.now() >= this.validUntilMs) void this.renew();
      this.armDeadline();
    });
  }

  private scheduleRenewal(): void {
    this.timer = this.env.scheduler.schedule(this.settings.leaseMs / RENEWALS_PER_LEASE, () => {
      this.timer = null;
      if (this.lostReason !== null) return;
      void this.renew().finally(() => {
        if (this.lostReason === null) this.scheduleRenewal();
      });
    });
  }

  /** One renewal (joins the one in flight). */
  private renew(): Promise<void> {
    this.inFlight ??= this.renewOnce().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async renewOnce(): Promise<void> {
    const sentMs = this.env.clock.now();
    try {
      const ok = await this.store.renew(this.settings.job, this.settings.holder, this.epoch, this.settings.leaseMs);
      if (this.lostReason !== null) return;
      if (!ok) {
        this.lose('its lease expired or another job master took it over');
        return;
      }
      this.lastOkSentMs = Math.max(this.lastOkSentMs, sentMs);
      this.validUntilMs = Math.max(this.validUntilMs, localDeadline(sentMs, this.settings.leaseMs));
      this.armDeadline();
    } catch {
      // The store did not answer: try again at the next renewal; the lease's end deposes this leader if none succeeds.
    }
  }
}
