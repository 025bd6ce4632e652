/**
 * `StreamEnvironment.execute` of a job whose options ask for high availability, against the local
 * PostgreSQL: the first process leads, a second waits as a standby and is told when the job ended
 * (HA_JOB_ENDED); a leader whose lease is taken from it fails its job with HA_LEADERSHIP_LOST and
 * ends nothing in the store.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { HaError, StreamEnvironment, type JobEvent, type StreamEnvironmentOptions } from '../../src/index.ts';
import { PostgresHaStore } from '../../src/cluster/ha/postgres-ha-store.ts';

const HA = `postgres://root@${process.env.WEIR_PG_HOST ?? '127.0.0.1'}:${process.env.WEIR_PG_PORT ?? 5432}/test`;
const jobs: string[] = [];

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
  const c = new pg.Client({ connectionString: HA });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

afterAll(async () => {
  for (const j of jobs) {
    await sql('DELETE FROM weir_ha_leases WHERE job = $1', [j]).catch(() => {});
    await sql('DELETE FROM weir_ha_pointers WHERE job = $1', [j]).catch(() => {});
    await sql('DELETE FROM weir_ha_submissions WHERE job = $1', [j]).catch(() => {});
    await sql('DELETE FROM weir_ha_published WHERE job = $1', [j]).catch(() => {});
  }
});

function haJob(
  records: number,
  ratePerSec: number,
  extra: StreamEnvironmentOptions,
): { env: StreamEnvironment; logs: string[]; onEvent: (e: JobEvent) => void } {
  const env = StreamEnvironment.create({ parallelism: 1, taskManagers: 'in-thread', ...extra });
  env
    .generate({ count: records, ratePerSec }, (i) => i)
    .uid('numbers')
    .sinkTo({ name: 'discard', kind: 'plain', createWriter: () => ({ write: () => {} }) })
    .uid('discard');
  const logs: string[] = [];
  return { env, logs, onEvent: (e) => void (e.type === 'log' && logs.push(e.message)) };
}

interface Published {
  readonly checkpointId: number;
  readonly location: string;
}

/**
 * A first leader's run under lease `jm-first` of `job` (a job without the option, under `root`,
 * retaining three checkpoints): its epoch and the three checkpoints retained when it stopped,
 * oldest first; nothing is published yet.
 */
async function firstLeaderRun(store: PostgresHaStore, job: string, root: string): Promise<{ epoch: number; retained: Published[] }> {
  const first = await store.acquire(job, 'jm-first', 60_000, null, true);
  if (!first.held) throw new Error('the new job was led already');
  const a = haJob(100_000_000, 2000, { checkpointing: { intervalMs: 40, retained: 3, retention: 'retain-on-cancel' }, checkpointStorage: root });
  const completed: Published[] = [];
  const client = await a.env.executeAsync('ha-first', {
    onEvent: (e) => void (e.type === 'checkpoint-completed' && completed.push({ checkpointId: e.stats.checkpointId, location: e.stats.location! })),
  });
  while (completed.length < 3) await new Promise((r) => setTimeout(r, 20));
  await client.cancel();
  return { epoch: first.epoch, retained: completed.slice(-3) };
}

describe('StreamEnvironment.execute with highAvailability', () => {
  it('the first leads and ends the job in the store; a second waits as a standby and is told the job ended', async () => {
    const job = `ha-exec-${process.pid}-a`;
    jobs.push(job);
    const options: StreamEnvironmentOptions = {
      checkpointing: { intervalMs: 50 },
      checkpointStorage: mkdtempSync(path.join(os.tmpdir(), 'weir-ha-exec-')),
      highAvailability: { type: 'postgres', url: HA, job, leaseMs: 900 },
    };
    const a = haJob(3000, 6000, options);
    const clientA = await a.env.executeAsync('ha-a', { onEvent: a.onEvent });
    expect(a.logs.find((l) => l.startsWith(`leading job '${job}'`))).toMatch(/\(epoch \d+, lease 900 ms\)$/);
    const b = haJob(3000, 6000, options);
    const standby = b.env.executeAsync('ha-b', { onEvent: b.onEvent }).then(
      () => null,
      (err: unknown) => err,
    );
    expect((await clientA.result).status).toBe('FINISHED');
    const ended = await standby;
    expect(ended).toBeInstanceOf(HaError);
    expect((ended as HaError).code).toBe('HA_JOB_ENDED');
    expect((ended as HaError).message).toContain(`job '${job}' has ended in the HA store`);
    expect(b.logs.some((l) => l.startsWith(`standby: job '${job}' is led by`))).toBe(true);
    expect(await sql('SELECT holder FROM weir_ha_leases WHERE job = $1', [job])).toEqual([{ holder: '' }]);
    expect(await sql('SELECT job FROM weir_ha_pointers WHERE job = $1', [job])).toEqual([]);
  }, 60_000);

  it('a leader whose lease is taken fails its job with HA_LEADERSHIP_LOST at its next renewal and ends nothing in the store', async () => {
    const job = `ha-exec-${process.pid}-b`;
    jobs.push(job);
    // No periodic checkpoint: only the renewal can find out (no refused pointer write).
    const a = haJob(100_000_000, 1000, { highAvailability: { type: 'postgres', url: HA, job, leaseMs: 900 } });
    const client = await a.env.executeAsync('ha-lost', { onEvent: a.onEvent });
    await sql(`UPDATE weir_ha_leases SET holder = 'another', epoch = epoch + 1, lease_until = now() + interval '1 hour' WHERE job = $1`, [job]);
    const failed = await client.result.then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(failed?.message).toContain(`lost the leadership of job ${job}`);
    expect(a.logs.some((l) => l.includes('its lease expired or another job master took it over'))).toBe(true);
    expect(await sql('SELECT holder FROM weir_ha_leases WHERE job = $1', [job])).toEqual([{ holder: 'another' }]);
  }, 60_000);

  it.each([
    ['corrupt', (location: string) => truncateSync(path.join(location, '_metadata'), 10)],
    ['missing', (location: string) => rmSync(location, { recursive: true })],
  ] as const)(
    'a takeover whose newest published checkpoint is %s at rest restores from the one published before it',
    async (what, spoil) => {
      const job = `ha-exec-${process.pid}-fallback-${what}`;
      jobs.push(job);
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-exec-'));
      // A first leader's run, as the store saw it: three checkpoints, each published under its epoch.
      const store = await PostgresHaStore.open(HA);
      try {
        const { epoch: firstEpoch, retained: published } = await firstLeaderRun(store, job, root);
        const first = { epoch: firstEpoch };
        for (const p of published) expect(await store.publish(job, first.epoch, p)).toBe(true);
        await store.release(job, 'jm-first', first.epoch);
        const [older, newer] = [published[1]!, published[2]!];
        spoil(newer.location);
        // The takeover, through the option.
        const b = haJob(100_000_000, 2000, { checkpointStorage: root, highAvailability: { type: 'postgres', url: HA, job, leaseMs: 2000 } });
        const events: JobEvent[] = [];
        const running = new Promise<JobEvent>((resolve) => {
          b.onEvent = (e) => {
            events.push(e);
            if (e.type === 'running') resolve(e);
          };
        });
        const taken = await b.env.executeAsync('ha-second', { onEvent: (e) => b.onEvent(e) });
        const ran = await running;
        await taken.cancel();
        expect(events.filter((e) => e.type === 'restore-fallback').map((e) => e.type === 'restore-fallback' && [e.checkpointId, e.location])).toEqual([
          [newer.checkpointId, newer.location],
        ]);
        expect(ran.type === 'running' && ran.restoredFrom).toBe(older.checkpointId);
      } finally {
        await store.close();
      }
    },
    60_000,
  );

  it("once the new leader published checkpointing.retained checkpoints of its own, the earlier leader's job directory goes: published, unpublished and half-written checkpoints", async () => {
    const job = `ha-exec-${process.pid}-cleanup`;
    jobs.push(job);
    const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-exec-'));
    const store = await PostgresHaStore.open(HA);
    try {
      const { epoch: firstEpoch, retained } = await firstLeaderRun(store, job, root);
      const first = { epoch: firstEpoch };
      // Published: the two older of the three retained; the newest stays unpublished (killed before its pointer).
      const [p1, p2, unpublished] = retained as [Published, Published, Published];
      for (const p of [p1, p2]) expect(await store.publish(job, first.epoch, p)).toBe(true);
      await store.release(job, 'jm-first', first.epoch);
      const dirA = path.dirname(p1.location);
      // What a checkpoint in progress had written when the leader died: a chk dir without _metadata, a temp file.
      mkdirSync(path.join(dirA, 'chk-999'));
      writeFileSync(path.join(dirA, 'chk-999', 'state-0.tmp'), 'half');
      expect(readdirSync(dirA).filter((n) => n.startsWith('chk-')).length).toBe(4);
      expect(existsSync(unpublished.location)).toBe(true);

      const b = haJob(100_000_000, 2000, {
        checkpointing: { intervalMs: 40, retained: 2 },
        checkpointStorage: root,
        highAvailability: { type: 'postgres', url: HA, job, leaseMs: 2000 },
      });
      const ownPublished: string[] = [];
      const taken = await b.env.executeAsync('ha-second', {
        onEvent: (e) => {
          b.onEvent(e);
          if (e.type === 'checkpoint-completed') ownPublished.push(e.stats.location!);
        },
      });
      const removed = `removed the job directory ${dirA} of an earlier leader`;
      while (!b.logs.some((l) => l.startsWith(removed))) {
        // Not before the second of its own (retained: 2): until then the earlier checkpoints are still retained.
        if (ownPublished.length < 2) expect(existsSync(p2.location)).toBe(true);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(ownPublished.length).toBeGreaterThanOrEqual(2);
      expect(existsSync(dirA)).toBe(false);
      expect(path.dirname(ownPublished[0]!)).not.toBe(dirA);
      expect(existsSync(ownPublished.at(-1)!)).toBe(true);
      await taken.cancel();
    } finally {
      await store.close();
    }
  }, 60_000);
});
