/**
 * A job with a PostgreSQL CDC source leaves its replication slot and publication on the server when
 * it ends: `weir run` warns of them, naming the slot and the command that drops them, and
 * `weir cdc drop-slot` drops them (not while a job streams the slot).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { slotNameOf } from '../../src/connectors/postgres/cdc/cdc-names.ts';
import { dropCdcObjects } from '../connectors/postgres/cdc/cdc-support.ts';
import { CONNECTION, client } from '../connectors/postgres/pg-support.ts';
import { FIXTURES, runCli } from './run-cli.ts';
import { startJob } from './running-job.ts';
import { until } from '../support/jobs.ts';

describe('weir cdc drop-slot, and the warning of a CDC job that ends', () => {
  it('a cancelled CDC job warns of its slot; drop-slot refuses a slot in use, drops it once free, and says when there is none', {
    timeout: 120_000,
  }, async () => {
    const db = await client();
    const schema = `weir_cdcslot_${process.pid}`;
    const slot = slotNameOf(schema);
    const root = await mkdtemp(path.join(os.tmpdir(), 'weir-cdc-slot-'));
    const env = { PGHOST: CONNECTION.host!, PGPORT: String(CONNECTION.port), PGDATABASE: 'test', PGUSER: 'root', CDC_SCHEMA: schema };
    const exists = async (): Promise<{ slot: boolean; publication: boolean }> => ({
      slot: (await db.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slot])).rowCount === 1,
      publication: (await db.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [slot])).rowCount === 1,
    });
    try {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.query(`CREATE SCHEMA ${schema}`);
      await db.query(`CREATE TABLE ${schema}.src (id integer PRIMARY KEY, k text NOT NULL, amount integer NOT NULL)`);
      await db.query(`CREATE TABLE ${schema}.agg (k text PRIMARY KEY, total bigint NOT NULL, n integer NOT NULL)`);
      const job = await startJob([path.join(FIXTURES, 'cdc-kill-job.ts'), '--checkpoint-dir', root], { env });
      await until(
        'the slot to be streamed',
        async () => (await db.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active', [slot])).rowCount === 1,
      );
      const inUse = await runCli(['cdc', 'drop-slot', slot], { env });
      expect(inUse.code).toBe(1);
      expect(inUse.stderr).toContain(`replication slot ${slot} is in use`);
      expect(await exists()).toEqual({ slot: true, publication: true });
      const cancelled = await runCli(['cancel', job.jobId], { env });
      expect(cancelled.code, cancelled.stderr).toBe(0);
      const ended = await job.cli.done;
      expect(ended.code).toBe(130);
      expect(ended.stderr).toMatch(
        new RegExp(`^warning: replication slot ${slot} and publication ${slot} stay on PostgreSQL at .* weir cdc drop-slot ${slot}$`, 'm'),
      );
      expect(await exists()).toEqual({ slot: true, publication: true });
      const dropped = await runCli(['cdc', 'drop-slot', slot], { env });
      expect(dropped.code, dropped.stderr).toBe(0);
      expect(dropped.stdout).toContain(`dropped replication slot ${slot} and publication ${slot} on PostgreSQL at`);
      expect(await exists()).toEqual({ slot: false, publication: false });
      const none = await runCli(['cdc', 'drop-slot', slot], { env });
      expect(none.code).toBe(0);
      expect(none.stderr).toContain(`no replication slot or publication ${slot}`);
      const bad = await runCli(['cdc', 'drop-slot', 'Not-A-Slot'], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("'Not-A-Slot' is not a replication slot name");
    } finally {
      await dropCdcObjects(db, slot);
      for (const r of (await db.query<{ gid: string }>('SELECT gid FROM pg_prepared_xacts WHERE gid LIKE $1', [`weir:${schema}%`])).rows)
        await db.query(`ROLLBACK PREPARED '${r.gid}'`);
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.end();
      await rm(root, { recursive: true, force: true });
    }
  });
});
