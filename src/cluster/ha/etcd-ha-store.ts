/**
 * The HA store on etcd (`--ha etcd://host:port`): the same rules as the PostgreSQL store
 * (`postgres-ha-store.ts`) with etcd's own parts. A leader holds an etcd lease (TTL of its lease,
 * rounded up to whole seconds as etcd counts them) with its leader key attached; the key's create
 * revision is its epoch (etcd revisions only grow, so epochs do), and every write a leader makes is
 * a transaction conditional on that create revision: when the lease runs out etcd deletes the key,
 * so a stale leader's pointer, submission or end compares false and writes nothing. Time is etcd's:
 * the lease expires on the etcd leader's clock, never the job masters'. A rounded-up TTL only makes
 * the store hold a lease longer than the job master thinks it does: the job master still stops
 * first (`leadership.ts`); a standby waits the extra part of a second.
 *
 * Keys under `weir/ha/<job>/` (`?prefix=` in the URL changes the root):
 *
 *   leader      {holder, address}   attached to the leader's lease; create revision = the epoch
 *   holder      {holder, address}   the last leader, unleased; mod revision = its epoch (who led, once the lease is gone)
 *   ended       {epoch}             the job ended (its last leader finished it)
 *   pointer     {checkpointId, location, epoch}
 *   published   [{checkpointId, location, epoch}, ...] newest first, PUBLISHED_KEPT of them
 *   submission  {graph, moduleHash, epoch}
 *   standby/<holder>  {address, seenAtMs}  attached to a short lease of the standby's own, put at each poll
 *
 * Why etcd3 (the npm client, pinned) with cockatiel's `noop` policies: it speaks etcd's gRPC API
 * with leases and transactions; its own retries are switched off because the leadership code
 * decides when to ask again (an answer that comes too late must count as none).
 */
import { noop } from 'cockatiel';
import { Etcd3, EtcdLeaseInvalidError, type Lease } from 'etcd3';
import { systemClock } from '../../core/adapters.ts';
import { errorMessage, HaError } from '../../core/errors.ts';
import {
  type AcquireResult,
  type CheckpointPointer,
  type HaStore,
  type JobSubmissionRecord,
  keepPublished,
  type LeaseHolder,
  PUBLISHED_KEPT,
  type StandbyEntry,
} from './ha-store.ts';
import { describeHaUrl } from './ha-url.ts';

interface Keys {
  readonly leader: string;
  readonly holder: string;
  readonly ended: string;
  readonly pointer: string;
  readonly published: string;
  readonly submission: string;
}

/** A key's value with the revisions the transactions compare. */
interface Read<T> {
  readonly value: T;
  readonly createRevision: number;
  readonly modRevision: number;
}

export class EtcdHaStore implements HaStore {
  readonly description: string;
  /** This process's leases, by `job/epoch`: renewed, attached to announcements, revoked at the end. */
  private readonly leases = new Map<string, Lease>();

  private constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    url: string,
  ) {
    this.description = describeHaUrl(url);
  }

  /**
   * Connects (a read of the job root answers) and returns the store.
   * @throws HaError (HA_UNREACHABLE) naming the URL (without its password) when etcd does not answer.
   */
  static async open(url: string, callTimeoutMs = 5_000): Promise<EtcdHaStore> {
    const u = new URL(url);
    const prefix = u.searchParams.get('prefix') ?? 'weir/ha/';
    const hosts = u.host.split(',').map((h) => `http://${h}`);
    const client = new Etcd3({
      hosts,
      ...(u.username === '' ? {} : { auth: { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) } }),
      dialTimeout: callTimeoutMs,
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: systemClock.wallNow() + callTimeoutMs }),
      faultHandling: { host: () => noop, global: noop },
    });
    const store = new EtcdHaStore(client, prefix, url);
    try {
      await client.get(`${prefix}`).exec();
    } catch (err) {
      client.close();
      throw new HaError('HA_UNREACHABLE', `cannot reach the HA store ${store.description}: ${errorMessage(err)}`, { cause: err });
    }
    return store;
  }

  async acquire(job: string, holder: string, leaseMs: number, address: string | null, takeEnded: boolean): Promise<AcquireResult> {
    const k = this.keys(job);
    const lease = this.client.lease(Math.max(1, Math.ceil(leaseMs / 1000)), { autoKeepAlive: false });
    const id = await this.call(() => lease.grant());
    const who = JSON.stringify({ holder, address });
    let txn = this.client.if(k.leader, 'Create', '==', 0);
    if (!takeEnded) txn = txn.and(k.ended, 'Create', '==', 0);
    const r = await this.call(() =>
      txn.then(this.client.put(k.leader).value(who).lease(id), this.client.put(k.holder).value(who), this.client.delete().key(k.ended)).commit(),
    );
    if (r.succeeded) {
      const epoch = Number(r.header.revision);
      this.leases.set(`${job}/${epoch}`, lease);
      return { held: true, epoch };
    }
    await lease.revoke().catch(() => {});
    const leader = await this.leader(job);
    if (leader === null) return this.acquire(job, holder, leaseMs, address, takeEnded); // gone meanwhile: try again
    return { held: false, leader };
  }

  async renew(job: string, holder: string, epoch: number, _leaseMs: number): Promise<boolean> {
    const lease = this.leases.get(`${job}/${epoch}`);
    if (lease === undefined) return false;
    try {
      await this.call(() => lease.keepaliveOnce());
    } catch (err) {
      if (err instanceof HaError && err.cause instanceof EtcdLeaseInvalidError) return false;
      throw err;
    }
    const l = await this.read<{ holder: string }>(this.keys(job).leader);
    return l !== null && l.createRevision === epoch && l.value.holder === holder;
  }

  async publish(job: string, epoch: number, pointer: Omit<CheckpointPointer, 'epoch'>): Promise<boolean> {
    const k = this.keys(job);
    const stamped: CheckpointPointer = { ...pointer, epoch };
    for (;;) {
      const [current, list] = await Promise.all([this.read<CheckpointPointer>(k.pointer), this.read<CheckpointPointer[]>(k.published)]);
      const newer = current === null || current.value.epoch < epoch || current.value.checkpointId < pointer.checkpointId;
      const ops = [this.client.put(k.published).value(JSON.stringify(keepPublished(list?.value ?? [], stamped)))];
      if (newer) ops.push(this.client.put(k.pointer).value(JSON.stringify(stamped)));
      const r = await this.call(() =>
        this.client
          .if(k.leader, 'Create', '==', epoch)
          .and(k.pointer, 'Mod', '==', current?.modRevision ?? 0)
          .and(k.published, 'Mod', '==', list?.modRevision ?? 0)
          .then(...ops)
          .commit(),
      );
      if (r.succeeded) return true;
      // Fenced (the lease ran out or another leader holds the key), or a publish of the same leader won the race: read again.
      if (!(await this.leads(job, epoch))) return false;
    }
  }

  async latest(job: string): Promise<CheckpointPointer | null> {
    return (await this.read<CheckpointPointer>(this.keys(job).pointer))?.value ?? null;
  }

  async published(job: string): Promise<readonly CheckpointPointer[]> {
    return ((await this.read<CheckpointPointer[]>(this.keys(job).published))?.value ?? []).slice(0, PUBLISHED_KEPT);
  }

  async leader(job: string): Promise<(LeaseHolder & { readonly live: boolean }) | null> {
    const k = this.keys(job);
    const [leader, last, ended] = await Promise.all([
      this.read<{ holder: string; address: string | null }>(k.leader),
      this.read<{ holder: string; address: string | null }>(k.holder),
      this.read<{ epoch: number }>(k.ended),
    ]);
    if (leader !== null) return { holder: leader.value.holder, epoch: leader.createRevision, address: leader.value.address, live: true };
    if (ended !== null) return { holder: '', epoch: ended.value.epoch, address: null, live: false };
    if (last !== null) return { holder: last.value.holder, epoch: last.modRevision, address: last.value.address, live: false };
    return null;
  }

  async announce(job: string, holder: string, epoch: number, address: string): Promise<void> {
    const lease = this.leases.get(`${job}/${epoch}`);
    if (lease === undefined) return;
    const id = await this.call(() => lease.grant());
    const k = this.keys(job);
    await this.call(() =>
      this.client
        .if(k.leader, 'Create', '==', epoch)
        .then(this.client.put(k.leader).value(JSON.stringify({ holder, address })).lease(id))
        .commit(),
    );
  }

  async finish(job: string, _holder: string, epoch: number): Promise<void> {
    const k = this.keys(job);
    await this.call(() =>
      this.client
        .if(k.leader, 'Create', '==', epoch)
        .then(
          this.client.delete().key(k.leader),
          this.client.delete().key(k.pointer),
          this.client.delete().key(k.published),
          this.client.delete().key(k.submission),
          this.client.delete().prefix(this.standbyKey(job, '')),
          this.client.put(k.ended).value(JSON.stringify({ epoch })),
        )
        .commit(),
    );
    await this.dropLease(job, epoch);
  }

  async release(job: string, _holder: string, epoch: number): Promise<void> {
    const k = this.keys(job);
    await this.call(() => this.client.if(k.leader, 'Create', '==', epoch).then(this.client.delete().key(k.leader)).commit());
    await this.dropLease(job, epoch);
  }

  async submit(job: string, epoch: number, record: Omit<JobSubmissionRecord, 'epoch'>): Promise<boolean> {
    const k = this.keys(job);
    const r = await this.call(() =>
      this.client
        .if(k.leader, 'Create', '==', epoch)
        .then(this.client.put(k.submission).value(JSON.stringify({ ...record, epoch })))
        .commit(),
    );
    return r.succeeded;
  }

  async standBy(job: string, holder: string, address: string | null, leaseMs: number): Promise<void> {
    const lease = this.client.lease(Math.max(1, Math.ceil(leaseMs / 1000)), { autoKeepAlive: false });
    const id = await this.call(() => lease.grant());
    await this.call(() =>
      this.client
        .put(this.standbyKey(job, holder))
        .value(JSON.stringify({ address, seenAtMs: systemClock.wallNow() }))
        .lease(id)
        .exec(),
    );
  }

  async leaveStandby(job: string, holder: string): Promise<void> {
    await this.call(() => this.client.delete().key(this.standbyKey(job, holder)).exec());
  }

  async standbys(job: string): Promise<readonly StandbyEntry[]> {
    const prefix = this.standbyKey(job, '');
    const r = await this.call(() => this.client.getAll().prefix(prefix).exec());
    // etcd keeps no time of its own in a key: the age is from the standby's clock, as it wrote it.
    return r.kvs
      .map((kv) => {
        const v = JSON.parse(kv.value.toString('utf8')) as { address: string | null; seenAtMs: number };
        return { holder: kv.key.toString('utf8').slice(prefix.length), address: v.address, seenMsAgo: Math.max(0, systemClock.wallNow() - v.seenAtMs) };
      })
      .sort((a, b) => b.seenMsAgo - a.seenMsAgo);
  }

  private standbyKey(job: string, holder: string): string {
    return `${this.prefix}${job}/standby/${holder}`;
  }

  async submission(job: string): Promise<JobSubmissionRecord | null> {
    return (await this.read<JobSubmissionRecord>(this.keys(job).submission))?.value ?? null;
  }

  async close(): Promise<void> {
    this.leases.clear();
    this.client.close();
  }

  private keys(job: string): Keys {
    const root = `${this.prefix}${job}/`;
    return {
      leader: `${root}leader`,
      holder: `${root}holder`,
      ended: `${root}ended`,
      pointer: `${root}pointer`,
      published: `${root}published`,
      submission: `${root}submission`,
    };
  }

  private async leads(job: string, epoch: number): Promise<boolean> {
    return (await this.read(this.keys(job).leader))?.createRevision === epoch;
  }

  private async dropLease(job: string, epoch: number): Promise<void> {
    const lease = this.leases.get(`${job}/${epoch}`);
    this.leases.delete(`${job}/${epoch}`);
    await lease?.revoke().catch(() => {});
  }

  private async read<T>(key: string): Promise<Read<T> | null> {
    const r = await this.call(() => this.client.get(key).exec());
    const kv = r.kvs[0];
    if (kv === undefined) return null;
    return { value: JSON.parse(kv.value.toString('utf8')) as T, createRevision: Number(kv.create_revision), modRevision: Number(kv.mod_revision) };
  }

  /** One call to etcd; its failure is an HaError (HA_UNREACHABLE) naming the store, with etcd's error as the cause. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new HaError('HA_UNREACHABLE', `the HA store ${this.description} failed: ${errorMessage(err)}`, { cause: err });
    }
  }
}
