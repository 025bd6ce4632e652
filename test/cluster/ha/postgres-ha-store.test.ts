/**
 * The PostgreSQL HA store against the local server: one leader per job, epochs that only grow, a
 * lease that cannot be renewed once it ran out or was taken, and a pointer that only the live
 * epoch can write (the fence). Leases that must still hold are long (60 s); leases that must have
 * run out are 1 ms, waited out: no outcome depends on the machine's speed.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TcpCutProxy } from '../../support/tcp-cut-proxy.ts';
import { HaError } from '../../../src/core/errors.ts';
import { PostgresHaStore } from '../../../src/cluster/ha/postgres-ha-store.ts';
import { PUBLISHED_KEPT } from '../../../src/cluster/ha/ha-store.ts';
import { describeHaUrl } from '../../../src/cluster/ha/ha-url.ts';

const URL_ = `postgres://root@${process.env.WEIR_PG_HOST ?? '127.0.0.1'}:${process.env.WEIR_PG_PORT ?? 5432}/test`;
const LONG = 60_000;
const jobs: string[] = [];
let n = 0;
const jobName = () => {
  const j = `ha-test-${process.pid}-${n++}`;
  jobs.push(j);
  return j;
};
const expire = () => new Promise((r) => setTimeout(r, 30));

const stores: PostgresHaStore[] = [];
async function open(): Promise<PostgresHaStore> {
  const s = await PostgresHaStore.open(URL_);
  stores.push(s);
  return s;
}

async function rawSession(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: URL_ });
  await c.connect();
  return c;
}

afterAll(async () => {
  const c = await rawSession();
  for (const j of jobs) {
    await c.query('DELETE FROM weir_ha_leases WHERE job = $1', [j]);
    await c.query('DELETE FROM weir_ha_pointers WHERE job = $1', [j]);
    await c.query('DELETE FROM weir_ha_published WHERE job = $1', [j]);
    await c.query('DELETE FROM weir_ha_submissions WHERE job = $1', [j]);
    await c.query('DELETE FROM weir_ha_standbys WHERE job = $1', [j]);
  }
  await c.end();
  for (const st of stores) await st.close();
});

describe('PostgresHaStore', () => {
  it('one job master leads; a second is told who leads; after the lease runs out the second takes over with the next epoch', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    expect(await a.acquire(job, 'jm-a', 1, 'host-a:1', true)).toEqual({ held: true, epoch: 1 });
    await expire();
    expect(await b.acquire(job, 'jm-b', LONG, 'host-b:2', true)).toEqual({ held: true, epoch: 2 });
    expect(await a.acquire(job, 'jm-a', LONG, 'host-a:1', true)).toEqual({
      held: false,
      leader: { holder: 'jm-b', epoch: 2, address: 'host-b:2', live: true },
    });
    expect(await a.leader(job)).toEqual({ holder: 'jm-b', epoch: 2, address: 'host-b:2', live: true });
  });

  it('a lease is renewed only by its holder of its epoch while it is live', async () => {
    const s = await open();
    const job = jobName();
    const first = await s.acquire(job, 'jm-a', 1, null, true);
    expect(first).toEqual({ held: true, epoch: 1 });
    await expire();
    expect(await s.renew(job, 'jm-a', 1, LONG)).toBe(false); // ran out: no quiet comeback
    expect(await s.acquire(job, 'jm-b', LONG, null, true)).toEqual({ held: true, epoch: 2 });
    expect(await s.renew(job, 'jm-b', 2, LONG)).toBe(true);
    expect(await s.renew(job, 'jm-a', 2, LONG)).toBe(false);
    expect(await s.renew(job, 'jm-b', 1, LONG)).toBe(false);
  });

  it('the pointer: written by the live epoch, never by a stale one, never moved back; the newest epoch reads what earlier ones published', async () => {
    const s = await open();
    const job = jobName();
    await s.acquire(job, 'jm-a', 1, null, true);
    expect(await s.latest(job)).toBeNull();
    // Epoch 1's lease already ran out: its write is refused.
    await expire();
    expect(await s.publish(job, 1, { checkpointId: 3, location: '/ck/a/chk-3' })).toBe(false);
    expect(await s.latest(job)).toBeNull();
    await s.acquire(job, 'jm-b', LONG, null, true);
    expect(await s.publish(job, 2, { checkpointId: 4, location: '/ck/b/chk-4' })).toBe(true);
    expect(await s.publish(job, 2, { checkpointId: 5, location: '/ck/b/chk-5' })).toBe(true);
    // An older checkpoint of the live epoch (subsumed) changes nothing and is not a fence.
    expect(await s.publish(job, 2, { checkpointId: 4, location: '/ck/b/chk-4' })).toBe(true);
    expect(await s.latest(job)).toEqual({ checkpointId: 5, location: '/ck/b/chk-5', epoch: 2 });
    expect(await s.publish(job, 1, { checkpointId: 9, location: '/ck/a/chk-9' })).toBe(false);
    expect(await s.latest(job)).toEqual({ checkpointId: 5, location: '/ck/b/chk-5', epoch: 2 });
  });

  it('the published list: the last PUBLISHED_KEPT, newest first, across epochs; a stale epoch adds nothing; an ended job has none', async () => {
    const s = await open();
    const job = jobName();
    await s.acquire(job, 'jm-a', LONG, null, true);
    for (const id of [1, 2, 3, 4]) expect(await s.publish(job, 1, { checkpointId: id, location: `/ck/a/chk-${id}` })).toBe(true);
    expect(PUBLISHED_KEPT).toBe(3);
    expect(await s.published(job)).toEqual([
      { checkpointId: 4, location: '/ck/a/chk-4', epoch: 1 },
      { checkpointId: 3, location: '/ck/a/chk-3', epoch: 1 },
      { checkpointId: 2, location: '/ck/a/chk-2', epoch: 1 },
    ]);
    await s.release(job, 'jm-a', 1);
    await s.acquire(job, 'jm-b', LONG, null, true);
    // The stale epoch's write is refused and lists nothing.
    expect(await s.publish(job, 1, { checkpointId: 9, location: '/ck/a/chk-9' })).toBe(false);
    expect(await s.publish(job, 2, { checkpointId: 5, location: '/ck/b/chk-5' })).toBe(true);
    expect((await s.published(job)).map((p) => [p.checkpointId, p.epoch])).toEqual([
      [5, 2],
      [4, 1],
      [3, 1],
    ]);
    await s.finish(job, 'jm-b', 2);
    expect(await s.published(job)).toEqual([]);
  });

  it('a pointer write racing a takeover in progress waits for it and is refused once it commits (the lease row is locked FOR SHARE)', async () => {
    const a = await open();
    const job = jobName();
    await a.acquire(job, 'jm-a', LONG, null, true);
    expect(await a.publish(job, 1, { checkpointId: 6, location: '/ck/a/chk-6' })).toBe(true);
    // A takeover in progress: another session bumped the epoch and has not committed yet.
    const raw = await rawSession();
    await raw.query('BEGIN');
    await raw.query(`UPDATE weir_ha_leases SET holder = 'jm-b', epoch = epoch + 1 WHERE job = $1`, [job]);
    let settled = false;
    const racing = a.publish(job, 1, { checkpointId: 7, location: '/ck/a/chk-7' }).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false); // held by the takeover's row lock
    await raw.query('COMMIT');
    await raw.end();
    expect(await racing).toBe(false);
    expect(await a.latest(job)).toEqual({ checkpointId: 6, location: '/ck/a/chk-6', epoch: 1 });
    expect(await a.renew(job, 'jm-a', 1, LONG)).toBe(false);
  });

  it('a released lease is taken at once, and the new leader reads the pointer its predecessor published', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    await a.acquire(job, 'jm-a', LONG, null, true);
    await a.publish(job, 1, { checkpointId: 3, location: '/ck/a/chk-3' });
    await a.release(job, 'jm-a', 1);
    expect(await b.acquire(job, 'jm-b', LONG, null, true)).toEqual({ held: true, epoch: 2 });
    expect(await b.latest(job)).toEqual({ checkpointId: 3, location: '/ck/a/chk-3', epoch: 1 });
  });

  it('finish removes the pointer and ends the lease: a standby does not take it, a new run of the job does, with a higher epoch', async () => {
    const s = await open();
    const job = jobName();
    await s.acquire(job, 'jm-a', LONG, null, true);
    await s.publish(job, 1, { checkpointId: 2, location: '/x/chk-2' });
    await s.finish(job, 'jm-a', 1);
    expect(await s.latest(job)).toBeNull();
    expect(await s.leader(job)).toEqual({ holder: '', epoch: 1, address: null, live: false });
    // A standby that watched the job run does not start it again; a new run of the job takes the lease.
    expect(await s.acquire(job, 'jm-b', LONG, null, false)).toEqual({ held: false, leader: { holder: '', epoch: 1, address: null, live: false } });
    expect(await s.acquire(job, 'jm-c', LONG, null, true)).toEqual({ held: true, epoch: 2 });
  });

  it('a leader whose lease ran out cannot end the job: its finish changes nothing, a standby still takes over', async () => {
    const s = await open();
    const job = jobName();
    await s.acquire(job, 'jm-a', 1, null, true);
    await expire();
    await s.finish(job, 'jm-a', 1);
    expect(await s.leader(job)).toMatchObject({ holder: 'jm-a', epoch: 1, live: false });
    expect(await s.acquire(job, 'jm-b', LONG, null, false)).toEqual({ held: true, epoch: 2 });
  });

  it('an unreachable server is one HaError naming the URL without its password', async () => {
    const err = await PostgresHaStore.open('postgres://root:sekret@127.0.0.1:1/test', 2_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HaError);
    expect((err as HaError).code).toBe('HA_UNREACHABLE');
    expect((err as Error).message).toContain('cannot reach the HA store postgres://root:***@127.0.0.1:1/test');
    expect((err as Error).message).not.toContain('sekret');
    expect(describeHaUrl('postgres://u:pw@h:5/d')).toBe('postgres://u:***@h:5/d');
  });

  it('rides out a broken connection (a server restart, a network cut): the call in flight fails, the next connects again', async () => {
    const proxy = await TcpCutProxy.start(process.env.WEIR_PG_HOST ?? '127.0.0.1', Number(process.env.WEIR_PG_PORT ?? 5432));
    try {
      const s = await PostgresHaStore.open(`postgres://root@127.0.0.1:${proxy.port}/test`, 2_000);
      stores.push(s);
      const job = jobName();
      expect(await s.acquire(job, 'jm-a', LONG, null, true)).toEqual({ held: true, epoch: 1 });
      proxy.cut();
      const failed = await s.renew(job, 'jm-a', 1, LONG).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(HaError);
      expect((failed as HaError).code).toBe('HA_UNREACHABLE');
      expect(await s.renew(job, 'jm-a', 1, LONG)).toBe(true);
      expect(await s.publish(job, 1, { checkpointId: 2, location: '/x/chk-2' })).toBe(true);
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
    } finally {
      await proxy.close();
    }
  });

  it('records the job its live leader runs; a stale epoch records nothing; the record goes when the job ends', async () => {
    const [a, b] = [await open(), await open()];
    const job = jobName();
    const graph = { vertices: [{ name: 'source -> map', parallelism: 2, uids: ['source', 'map'] }] };
    expect(await a.submission(job)).toBeNull();
    expect(await a.acquire(job, 'jm-a', 1, null, true)).toEqual({ held: true, epoch: 1 });
    await expire();
    expect(await a.submit(job, 1, { graph, moduleHash: 'a'.repeat(64) })).toBe(false);
    expect(await b.acquire(job, 'jm-b', LONG, null, true)).toEqual({ held: true, epoch: 2 });
    expect(await b.submit(job, 2, { graph, moduleHash: 'b'.repeat(64) })).toBe(true);
    expect(await a.submit(job, 1, { graph: { vertices: [] }, moduleHash: null })).toBe(false);
    expect(await a.submission(job)).toEqual({ graph, moduleHash: 'b'.repeat(64), epoch: 2 });
    await b.finish(job, 'jm-b', 2);
    expect(await a.submission(job)).toBeNull();
  });

  it('lists the standbys heard from within their lease, oldest first; one that left, ran out or whose job ended is not listed', async () => {
    const s = await open();
    const job = jobName();
    await s.acquire(job, 'jm-a', LONG, null, true);
    await s.standBy(job, 'jm-b', 'http://127.0.0.1:8081', LONG);
    await s.standBy(job, 'jm-c', null, 1);
    await expire();
    await s.standBy(job, 'jm-d', 'http://127.0.0.1:8083', LONG);
    const listed = await s.standbys(job);
    expect(listed.map((w) => [w.holder, w.address])).toEqual([
      ['jm-b', 'http://127.0.0.1:8081'],
      ['jm-d', 'http://127.0.0.1:8083'],
    ]);
    expect(listed.every((w) => w.seenMsAgo >= 0 && w.seenMsAgo < LONG)).toBe(true);
    await s.standBy(job, 'jm-b', 'http://127.0.0.1:8081', LONG); // a later poll renews, it does not add
    await s.leaveStandby(job, 'jm-d');
    expect((await s.standbys(job)).map((w) => w.holder)).toEqual(['jm-b']);
    await s.finish(job, 'jm-a', 1);
    expect(await s.standbys(job)).toEqual([]);
  });
});
