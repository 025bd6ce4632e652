/**
 * An HA store in memory, on a Clock: the same lease and pointer rules as the PostgreSQL store
 * (`postgres-ha-store.ts`), for the simulator (virtual time: leases run out as the seed's world
 * moves) and for tests of the leadership logic. Each call settles on a later turn, as a round trip
 * to a server would.
 */
import type { Clock } from '../../core/time.ts';
import {
  type AcquireResult,
  type CheckpointPointer,
  type HaStore,
  type JobSubmissionRecord,
  keepPublished,
  type LeaseHolder,
  type StandbyEntry,
} from './ha-store.ts';

interface Lease extends LeaseHolder {
  readonly untilMs: number;
}

export class MemoryHaStore implements HaStore {
  readonly description = 'memory HA store';
  private readonly leases = new Map<string, Lease>();
  private readonly pointers = new Map<string, CheckpointPointer>();
  private readonly publishedOf = new Map<string, readonly CheckpointPointer[]>();
  private readonly submissions = new Map<string, JobSubmissionRecord>();
  private readonly waiting = new Map<string, Map<string, { address: string | null; seenMs: number; untilMs: number }>>();
  /** Pointer writes refused (a stale epoch), for the simulator's counts. */
  refusedPublishes = 0;

  constructor(private readonly clock: Clock) {}

  acquire(job: string, holder: string, leaseMs: number, address: string | null, takeEnded: boolean): Promise<AcquireResult> {
    return settle(() => {
      const now = this.clock.now();
      const l = this.leases.get(job);
      if (l !== undefined && (l.untilMs > now || (l.holder === '' && !takeEnded))) return { held: false, leader: l };
      const epoch = (l?.epoch ?? 0) + 1;
      this.leases.set(job, { holder, epoch, address, untilMs: now + leaseMs });
      return { held: true, epoch };
    });
  }

  renew(job: string, holder: string, epoch: number, leaseMs: number): Promise<boolean> {
    return settle(() => {
      const now = this.clock.now();
      const l = this.leases.get(job);
      if (l === undefined || l.holder !== holder || l.epoch !== epoch || l.untilMs <= now) return false;
      this.leases.set(job, { ...l, untilMs: now + leaseMs });
      return true;
    });
  }

  publish(job: string, epoch: number, pointer: Omit<CheckpointPointer, 'epoch'>): Promise<boolean> {
    return settle(() => {
      const l = this.leases.get(job);
      if (l === undefined || l.epoch !== epoch || l.untilMs <= this.clock.now()) {
        this.refusedPublishes++;
        return false;
      }
      const p = this.pointers.get(job);
      if (p === undefined || p.epoch < epoch || p.checkpointId < pointer.checkpointId) this.pointers.set(job, { ...pointer, epoch });
      this.publishedOf.set(job, keepPublished(this.publishedOf.get(job) ?? [], { ...pointer, epoch }));
      return true;
    });
  }

  latest(job: string): Promise<CheckpointPointer | null> {
    return settle(() => this.pointers.get(job) ?? null);
  }

  published(job: string): Promise<readonly CheckpointPointer[]> {
    return settle(() => this.publishedOf.get(job) ?? []);
  }

  leader(job: string): Promise<(LeaseHolder & { readonly live: boolean }) | null> {
    return settle(() => {
      const l = this.leases.get(job);
      return l === undefined ? null : { holder: l.holder, epoch: l.epoch, address: l.address, live: l.untilMs > this.clock.now() };
    });
  }

  announce(job: string, holder: string, epoch: number, address: string): Promise<void> {
    return settle(() => {
      const l = this.leases.get(job);
      if (l !== undefined && l.holder === holder && l.epoch === epoch) this.leases.set(job, { ...l, address });
    });
  }

  finish(job: string, holder: string, epoch: number): Promise<void> {
    return settle(() => {
      const l = this.leases.get(job);
      if (l === undefined || l.holder !== holder || l.epoch !== epoch || l.untilMs <= this.clock.now()) return;
      this.leases.set(job, { holder: '', epoch, address: null, untilMs: Number.NEGATIVE_INFINITY });
      this.pointers.delete(job);
      this.publishedOf.delete(job);
      this.submissions.delete(job);
      this.waiting.delete(job);
    });
  }

  submit(job: string, epoch: number, record: Omit<JobSubmissionRecord, 'epoch'>): Promise<boolean> {
    return settle(() => {
      const l = this.leases.get(job);
      if (l === undefined || l.epoch !== epoch || l.untilMs <= this.clock.now()) return false;
      this.submissions.set(job, { ...record, epoch });
      return true;
    });
  }

  standBy(job: string, holder: string, address: string | null, leaseMs: number): Promise<void> {
    return settle(() => {
      const now = this.clock.now();
      const of = this.waiting.get(job) ?? new Map();
      of.set(holder, { address, seenMs: now, untilMs: now + leaseMs });
      this.waiting.set(job, of);
    });
  }

  leaveStandby(job: string, holder: string): Promise<void> {
    return settle(() => void this.waiting.get(job)?.delete(holder));
  }

  standbys(job: string): Promise<readonly StandbyEntry[]> {
    return settle(() => {
      const now = this.clock.now();
      return [...(this.waiting.get(job) ?? new Map()).entries()]
        .filter(([, w]) => w.untilMs > now)
        .map(([holder, w]) => ({ holder, address: w.address, seenMsAgo: now - w.seenMs }));
    });
  }

  submission(job: string): Promise<JobSubmissionRecord | null> {
    return settle(() => this.submissions.get(job) ?? null);
  }

  release(job: string, holder: string, epoch: number): Promise<void> {
    return settle(() => {
      const l = this.leases.get(job);
      if (l !== undefined && l.holder === holder && l.epoch === epoch) this.leases.set(job, { ...l, untilMs: Number.NEGATIVE_INFINITY });
    });
  }

  /** The id of the newest published checkpoint of `job` (0: none), read at once (the simulator's checkers). */
  publishedMax(job: string): number {
    return this.pointers.get(job)?.checkpointId ?? 0;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function settle<T>(fn: () => T): Promise<T> {
  return Promise.resolve().then(fn);
}
