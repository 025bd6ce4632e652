/** Test support for the CDC source: a schema of its own per test whose slot and publication are dropped afterwards. */
import type pg from 'pg';
import type { ChangeRecord } from '../../../../src/connectors/postgres/index.ts';
import { slotNameOf } from '../../../../src/connectors/postgres/cdc/cdc-names.ts';
import { parseLsn } from '../../../../src/connectors/postgres/cdc/lsn.ts';
import { freshSchema } from '../pg-support.ts';

/** A fresh schema with table `t (id int primary key, v int)` (REPLICA IDENTITY FULL), and the source id to capture it with. */
export async function cdcSchema(): Promise<{ schema: string; id: string; slot: string; admin: pg.Client; drop(): Promise<void> }> {
  const s = await freshSchema('id integer PRIMARY KEY, v integer NOT NULL');
  await s.admin.query(`ALTER TABLE ${s.schema}.t REPLICA IDENTITY FULL`);
  const id = s.schema;
  const slot = slotNameOf(id);
  return {
    ...s,
    id,
    slot,
    async drop() {
      await dropCdcObjects(s.admin, slot);
      await s.drop();
    },
  };
}

/** Drops the slot (waiting for it to be released) and the publication. */
export async function dropCdcObjects(admin: pg.Client, slot: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await admin.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    if (res.rows.length === 0) break;
    if (!res.rows[0]!.active) {
      await admin.query('SELECT pg_drop_replication_slot($1)', [slot]);
      break;
    }
    await admin.query('SELECT pg_sleep(0.05)');
  }
  await admin.query(`DROP PUBLICATION IF EXISTS ${slot}`);
}

/** The slot's confirmed position, null when there is no slot. */
export async function confirmedLsn(admin: pg.Client, slot: string): Promise<bigint | null> {
  const res = await admin.query<{ c: string | null }>('SELECT confirmed_flush_lsn::text AS c FROM pg_replication_slots WHERE slot_name = $1', [slot]);
  const c = res.rows[0]?.c;
  return c == null ? null : parseLsn(c);
}

/** A change as a short string: `I 4 v=7`, `U 1 v=1->10`, `D 2 v=2`, snapshot rows `S 1 v=1`. */
export function show(c: ChangeRecord): string {
  switch (c.kind) {
    case 'insert':
      return `${c.snapshot ? 'S' : 'I'} ${String(c.after.id)} v=${String(c.after.v)}`;
    case 'update':
      return `U ${String(c.after.id)} v=${String(c.before?.v)}->${String(c.after.v)}`;
    case 'delete':
      return `D ${String(c.before.id)} v=${String(c.before.v)}`;
  }
}
