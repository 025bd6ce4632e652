/**
 * A leader's step-down against the local PostgreSQL HA store: once it steps down (SIGTERM, Ctrl-C),
 * nothing after it ends the job in the store, so a job that fails locally meanwhile (a checkpoint's
 * publication refused by the stopped leadership) still goes on under the next job master.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { becomeLeader } from '../../../src/cluster/ha/ha-leader.ts';

const URL_ = `postgres://root@${process.env.WEIR_PG_HOST ?? '127.0.0.1'}:${process.env.WEIR_PG_PORT ?? 5432}/test`;
const graph = { vertices: [{ name: 'source -> sink', parallelism: 1, uids: ['source', 'sink'] }] };
const own = { graph, moduleHash: null };
const jobs: string[] = [];

afterAll(async () => {
  const c = new pg.Client({ connectionString: URL_ });
  await c.connect();
  for (const j of jobs) {
    for (const table of ['weir_ha_leases', 'weir_ha_pointers', 'weir_ha_published', 'weir_ha_submissions', 'weir_ha_standbys']) {
      await c.query(`DELETE FROM ${table} WHERE job = $1`, [j]);
    }
  }
  await c.end();
});

describe('an HA leader stepping down', () => {
  it('finish after a step-down began ends nothing: the next job master takes the job over from its pointer at once', async () => {
    const job = `ha-step-down-${process.pid}`;
    jobs.push(job);
    const settings = { url: URL_, job, leaseMs: 60_000, newRun: false };
    const lines: string[] = [];
    const lead = async () =>
      (await becomeLeader(
        settings,
        own,
        (l) => lines.push(l),
        () => {},
      ))!;
    const a = await lead();
    expect(a.leadership.epoch).toBe(1);
    await a.leadership.publish(3, 'file:///chk/chk-3');
    const stepping = a.stepDown();
    expect(a.stepDown()).toBe(stepping);
    await a.finish(); // the job failed here while its leader stepped down
    await stepping;
    expect(lines.filter((l) => l.includes('could not'))).toEqual([]);
    // The lease was given up (no 60 s wait) and the job was not ended: the pointer is still there.
    const b = await lead();
    expect(b).not.toBeNull();
    expect(b.leadership.epoch).toBe(2);
    expect(b.takeOverFrom).toBe('file:///chk/chk-3');
    await b.finish();
  });
});
