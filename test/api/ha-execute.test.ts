/**
 * `StreamEnvironment.execute` of a job whose options ask for high availability, against the local
 * PostgreSQL: the first process leads, a second waits as a standby and is told when the job ended
 * (HA_JOB_ENDED); a leader whose lease is taken from it fails its job with HA_LEADERSHIP_LOST and
 * ends nothing in the store.
 */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { HaError, StreamEnvironment, type JobEvent, type StreamEnvironmentOptions } from '../../src/index.ts';

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
});
