/**
 * The etcd HA store against an etcd of the test's own (test/support/servers.ts): one leader per
 * job, epochs (the leader key's create revision) that only grow, a lease that cannot be renewed
 * once etcd expired it, and a pointer, list and submission that only the live epoch writes. Leases
 * that must hold are long (60 s); a lease that must run out is 1 s (etcd counts whole seconds) and
 * is waited out by asking the store until it says so: no outcome depends on the machine's speed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HaError } from '../../../src/core/errors.ts';
import { EtcdHaStore } from '../../../src/cluster/ha/etcd-ha-store.ts';
import { PUBLISHED_KEPT } from '../../../src/cluster/ha/ha-store.ts';
import { PrivateServer, serverProblem } from '../../support/servers.ts';

const problem = serverProblem('etcd', 'etcd-server');
if (problem !== null) console.warn(`etcd HA store: skipped: ${problem}`);
const LONG = 60_000;
let n = 0;
const jobName = () => `ha-etcd-${process.pid}-${n++}`;

describe.skipIf(problem !== null)('EtcdHaStore', () => {
  let etcd: PrivateServer;
  let url: string;
  const stores: EtcdHaStore[] = [];
  beforeAll(async () => {
    etcd = await PrivateServer.etcd();
    url = `etcd://127.0.0.1:${etcd.port}`;
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await etcd?.kill();
  });
  async function open(): Promise<EtcdHaStore> {
    const s = await EtcdHaStore.open(url);
    stores.push(s);
    return s;
  }
  /** Waits until etcd expired the lease of `job` (its leader key is gone). */
  async function expired(s: EtcdHaStore, job: string): Promise<void> {
    for (let i = 0; i < 200 && (await s.leader(job))?.live === true; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await s.leader(job))?.live).toBe(false);
  }
  async function lead(s: EtcdHaStore, job: string, holder: string, leaseMs = LONG): Promise<number> {
    const r = await s.acquire(job, holder, leaseMs, null, true);
    if (!r.held) throw new Error(`${holder} did not get the lease: ${JSON.stringify(r)}`);
    return r.epoch;
  }

  it('one job master leads; a second is told who leads; after the lease runs out the second takes over with a higher epoch', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    const first = await a.acquire(job, 'jm-a', 1000, 'host-a:1', true);
    expect(first.held).toBe(true);
    const e1 = first.held ? first.epoch : 0;
    expect(await b.acquire(job, 'jm-b', LONG, 'host-b:2', true)).toEqual({
      held: false,
      leader: { holder: 'jm-a', epoch: e1, address: 'host-a:1', live: true },
    });
    await expired(b, job);
    expect(await b.leader(job)).toEqual({ holder: 'jm-a', epoch: e1, address: 'host-a:1', live: false });
    const e2 = await lead(b, job, 'jm-b');
    expect(e2).toBeGreaterThan(e1);
    expect(await a.leader(job)).toEqual({ holder: 'jm-b', epoch: e2, address: null, live: true });
    await b.announce(job, 'jm-b', e2, 'host-b:3');
    expect(await a.leader(job)).toEqual({ holder: 'jm-b', epoch: e2, address: 'host-b:3', live: true });
    await a.announce(job, 'jm-a', e1, 'host-a:9'); // a stale leader announces nothing
    expect((await a.leader(job))?.address).toBe('host-b:3');
  });

  it('a lease is renewed only by its holder of its epoch while it is live', async () => {
    const s = await open();
    const job = jobName();
    const e1 = await lead(s, job, 'jm-a', 1000);
    expect(await s.renew(job, 'jm-a', e1, 1000)).toBe(true);
    await expired(s, job);
    expect(await s.renew(job, 'jm-a', e1, LONG)).toBe(false); // ran out: no quiet comeback
    const e2 = await lead(s, job, 'jm-b');
    expect(await s.renew(job, 'jm-b', e2, LONG)).toBe(true);
    expect(await s.renew(job, 'jm-a', e2, LONG)).toBe(false);
    expect(await s.renew(job, 'jm-b', e1, LONG)).toBe(false);
  });

  it('the pointer and the published list: written by the live epoch only, never moved back, the last PUBLISHED_KEPT newest first', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    const e1 = await lead(a, job, 'jm-a', 1000);
    expect(await a.latest(job)).toBeNull();
    expect(await a.publish(job, e1, { checkpointId: 1, location: '/ck/a/chk-1' })).toBe(true);
    // Two publishes of one leader at once (concurrent checkpoints): both land.
    expect(
      await Promise.all([a.publish(job, e1, { checkpointId: 2, location: '/ck/a/chk-2' }), a.publish(job, e1, { checkpointId: 3, location: '/ck/a/chk-3' })]),
    ).toEqual([true, true]);
    expect(await a.latest(job)).toEqual({ checkpointId: 3, location: '/ck/a/chk-3', epoch: e1 });
    await expired(a, job);
    expect(await a.publish(job, e1, { checkpointId: 4, location: '/ck/a/chk-4' })).toBe(false);
    const e2 = await lead(b, job, 'jm-b');
    expect(await b.latest(job)).toEqual({ checkpointId: 3, location: '/ck/a/chk-3', epoch: e1 });
    expect(await b.publish(job, e2, { checkpointId: 5, location: '/ck/b/chk-5' })).toBe(true);
    // An older checkpoint of the live epoch (subsumed) is not a fence and does not move the pointer back.
    expect(await b.publish(job, e2, { checkpointId: 4, location: '/ck/b/chk-4' })).toBe(true);
    expect(await a.publish(job, e1, { checkpointId: 9, location: '/ck/a/chk-9' })).toBe(false);
    expect(await b.latest(job)).toEqual({ checkpointId: 5, location: '/ck/b/chk-5', epoch: e2 });
    expect(PUBLISHED_KEPT).toBe(3);
    expect((await b.published(job)).map((p) => [p.checkpointId, p.epoch])).toEqual([
      [5, e2],
      [4, e2],
      [3, e1],
    ]);
  });

  it('a released lease is taken at once; finish ends the job: a standby does not take it, a new run does with a higher epoch; a stale finish changes nothing', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    const e1 = await lead(a, job, 'jm-a');
    await a.publish(job, e1, { checkpointId: 3, location: '/ck/a/chk-3' });
    await a.release(job, 'jm-a', e1);
    const e2 = await lead(b, job, 'jm-b');
    expect(await b.latest(job)).toEqual({ checkpointId: 3, location: '/ck/a/chk-3', epoch: e1 });
    await a.finish(job, 'jm-a', e1); // deposed: ends nothing
    expect(await b.latest(job)).not.toBeNull();
    expect(await b.submit(job, e2, { graph: { vertices: [] }, moduleHash: null })).toBe(true);
    await b.finish(job, 'jm-b', e2);
    expect(await b.latest(job)).toBeNull();
    expect(await b.published(job)).toEqual([]);
    expect(await b.submission(job)).toBeNull();
    expect(await a.leader(job)).toEqual({ holder: '', epoch: e2, address: null, live: false });
    expect(await a.acquire(job, 'jm-c', LONG, null, false)).toEqual({ held: false, leader: { holder: '', epoch: e2, address: null, live: false } });
    expect(await lead(a, job, 'jm-d')).toBeGreaterThan(e2);
  });

  it('records the job its live leader runs; a stale epoch records nothing', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    const graph = { vertices: [{ name: 'source -> map', parallelism: 2, uids: ['source', 'map'] }] };
    const e1 = await lead(a, job, 'jm-a', 1000);
    expect(await a.submit(job, e1, { graph, moduleHash: 'a'.repeat(64) })).toBe(true);
    await expired(a, job);
    expect(await a.submit(job, e1, { graph: { vertices: [] }, moduleHash: null })).toBe(false);
    const e2 = await lead(b, job, 'jm-b');
    expect(await b.submission(job)).toEqual({ graph, moduleHash: 'a'.repeat(64), epoch: e1 });
    expect(await b.submit(job, e2, { graph, moduleHash: 'b'.repeat(64) })).toBe(true);
    expect(await a.submission(job)).toEqual({ graph, moduleHash: 'b'.repeat(64), epoch: e2 });
  });

  it('lists the standbys heard from within their lease; one that left or whose job ended is not listed', async () => {
    const s = await open();
    const job = jobName();
    const e = await lead(s, job, 'jm-a');
    await s.standBy(job, 'jm-b', 'http://127.0.0.1:8081', LONG);
    await s.standBy(job, 'jm-c', null, LONG);
    expect((await s.standbys(job)).map((w) => [w.holder, w.address]).sort()).toEqual([
      ['jm-b', 'http://127.0.0.1:8081'],
      ['jm-c', null],
    ]);
    await s.leaveStandby(job, 'jm-c');
    expect((await s.standbys(job)).map((w) => w.holder)).toEqual(['jm-b']);
    await s.finish(job, 'jm-a', e);
    expect(await s.standbys(job)).toEqual([]);
  });

  it('an unreachable etcd is one HaError naming the URL without its password', async () => {
    const e = await EtcdHaStore.open('etcd://weir:sekret-pw@127.0.0.1:1').catch((err: unknown) => err);
    expect(e).toBeInstanceOf(HaError);
    expect((e as HaError).code).toBe('HA_UNREACHABLE');
    expect((e as HaError).message).toContain('cannot reach the HA store etcd://weir:***@127.0.0.1:1');
    expect((e as HaError).message).not.toContain('sekret-pw');
  });
});
