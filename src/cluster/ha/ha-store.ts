/**
 * High availability of the job master: what a store of leaders and pointers must offer. Flink's
 * HA services keep only pointers (leader, checkpoint counter, completed checkpoints, the job
 * graph) in ZooKeeper or a ConfigMap; the state itself stays in checkpoint storage. The same here:
 *
 * - a lease per job with a monotonically increasing epoch: `acquire` takes it when it is free or
 *   expired (bumping the epoch), `renew` extends it only for the holder of that epoch while it is
 *   still live, so a leader that missed its renewals cannot quietly continue;
 * - the pointer to the newest completed checkpoint (and the few before it, to fall back on), written with `publish` in the step that makes
 *   a checkpoint complete (after `_metadata` is durable, before any subtask is told to commit), and
 *   only by the holder of the current, live lease: a stale leader's write is refused, so it can
 *   never tell a sink to commit. A takeover reads the pointer after it holds the lease, so it sees
 *   every checkpoint its predecessors published;
 * - the job submission (`submit`): the graph's shape and the module's hash, so a job master that
 *   built another job refuses to stand by or take over (`ha-submission.ts`).
 *
 * The checkpoint id counter needs no record of its own: a leader's ids continue above the
 * checkpoint it restored, and each leader writes a job directory of its own, so ids of two
 * leaders never name the same files.
 *
 * Time is the store's (the database server's clock), never the job masters': leases compare with
 * one clock. Each job master also keeps its own, shorter deadline (`leadership.ts`) and stops
 * before the store could give the lease away.
 */
import type { GraphFingerprint } from '../transport/protocol.ts';

/** The lease of one job as the store holds it. */
export interface LeaseHolder {
  /** Who holds it (a job master's candidate id: host, pid, random part); '' once the job ended. */
  readonly holder: string;
  readonly epoch: number;
  /** Where that job master can be reached (its task manager address), or null. */
  readonly address: string | null;
}

/** The newest completed checkpoint, as published. */
export interface CheckpointPointer {
  readonly checkpointId: number;
  /** Its location in checkpoint storage (what `--from` takes). */
  readonly location: string;
  /** The epoch of the leader that published it. */
  readonly epoch: number;
}

/** Published checkpoints an HA store keeps per job (the newest and the ones before it to fall back on). */
export const PUBLISHED_KEPT = 3;

/** Keeps the newest `PUBLISHED_KEPT` of `list` with `pointer` added (a pure decision; one per checkpoint id, the newer epoch's). */
export function keepPublished(list: readonly CheckpointPointer[], pointer: CheckpointPointer): CheckpointPointer[] {
  return [pointer, ...list.filter((p) => p.checkpointId !== pointer.checkpointId)].sort((a, b) => b.checkpointId - a.checkpointId).slice(0, PUBLISHED_KEPT);
}

/**
 * What job a leader runs, kept in the store beside the lease (Flink keeps the job graph there): a
 * job master about to stand by or take over compares it with the job it built, so two different
 * jobs never share one HA name and one's checkpoints are never restored into the other's operators.
 */
export interface JobSubmissionRecord {
  /** The job graph's shape: vertex names, parallelism and operator uids (`graph-fingerprint.ts`). */
  readonly graph: GraphFingerprint;
  /** The content hash of the job module's bundle (sha256, hex), as task managers check it; null: a job built in code. */
  readonly moduleHash: string | null;
  /** The epoch of the leader that recorded it. */
  readonly epoch: number;
}

/** A standby job master as the store last heard of it. */
export interface StandbyEntry {
  /** Its candidate id (host, pid, random part). */
  readonly holder: string;
  /** Where people reach it (its web address), or null. */
  readonly address: string | null;
  /** Milliseconds since it last said it waits (the store's clock). */
  readonly seenMsAgo: number;
}

/** The answer to `acquire`: the lease with its new epoch, or who holds it now. */
export type AcquireResult = { readonly held: true; readonly epoch: number } | { readonly held: false; readonly leader: LeaseHolder };

/** One job's leadership and pointers in a store (PostgreSQL: `postgres-ha-store.ts`). */
export interface HaStore {
  /** The store for people: its URL without credentials. */
  readonly description: string;
  /**
   * Takes the lease of `job` for `leaseMs` when nobody holds a live one (a new epoch), else says who
   * does. An ended job's lease (holder '') is taken only with `takeEnded` (a new run of the job; a
   * standby that watched it run must not start it again).
   */
  acquire(job: string, holder: string, leaseMs: number, address: string | null, takeEnded: boolean): Promise<AcquireResult>;
  /** Extends the lease by `leaseMs` from now; false when `holder` no longer holds a live lease of `epoch`. */
  renew(job: string, holder: string, epoch: number, leaseMs: number): Promise<boolean>;
  /** Publishes a completed checkpoint; false (nothing written) when `epoch` is not the live lease's. */
  publish(job: string, epoch: number, pointer: Omit<CheckpointPointer, 'epoch'>): Promise<boolean>;
  /** The newest published checkpoint of `job`, or null. */
  latest(job: string): Promise<CheckpointPointer | null>;
  /**
   * The last `PUBLISHED_KEPT` published checkpoints of `job`, newest first: what a takeover falls
   * back on when the newest does not verify (corrupt or missing at rest), under the sink-aware rule.
   */
  published(job: string): Promise<readonly CheckpointPointer[]>;
  /** Who holds the lease of `job` (live or not), or null when nobody ever did. */
  leader(job: string): Promise<(LeaseHolder & { readonly live: boolean }) | null>;
  /** Where task managers reach the leader of `epoch` (its `--listen` address once bound); nothing when it no longer leads. */
  announce(job: string, holder: string, epoch: number, address: string): Promise<void>;
  /** The job ended for good: its lease and pointer go (only by the holder of `epoch`, while its lease is live: a deposed leader ends nothing). */
  finish(job: string, holder: string, epoch: number): Promise<void>;
  /**
   * Records the job the leader of `epoch` runs (replacing an earlier leader's record); false
   * (nothing written) when `epoch` is not the live lease's. Removed with the job by `finish`.
   */
  submit(job: string, epoch: number, record: Omit<JobSubmissionRecord, 'epoch'>): Promise<boolean>;
  /** The job its leaders recorded, or null (none yet, or the job ended). */
  submission(job: string): Promise<JobSubmissionRecord | null>;
  /** A standby says it waits for `job` (each poll): listed by `standbys` for `leaseMs` from now. */
  standBy(job: string, holder: string, address: string | null, leaseMs: number): Promise<void>;
  /** A standby stops waiting (it leads, or exits). */
  leaveStandby(job: string, holder: string): Promise<void>;
  /** The standbys of `job` heard from within their lease, oldest first; none once the job ended. */
  standbys(job: string): Promise<readonly StandbyEntry[]>;
  /** Gives the lease up (a clean stop of a leader whose job is not over); others may take it at once. */
  release(job: string, holder: string, epoch: number): Promise<void>;
  close(): Promise<void>;
}
