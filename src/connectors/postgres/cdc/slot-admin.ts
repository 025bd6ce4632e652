/** Catalog work of the CDC source on a plain connection: its publication, and inspecting or dropping its slot. */
import type pg from 'pg';
import type { CapturedTable } from './captured-table.ts';
import { qualified, quoteIdent } from '../sql.ts';
import { parseLsn } from './lsn.ts';

/** The captured tables that do not exist (as `schema.table`). */
export async function missingTables(client: pg.Client, tables: readonly CapturedTable[]): Promise<string[]> {
  const missing: string[] = [];
  for (const t of tables) {
    const res = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [qualified(t.schema, t.table)]);
    if (res.rows[0]?.t == null) missing.push(`${t.schema}.${t.table}`);
  }
  return missing;
}

/** Creates publication `name` for exactly `tables`, or sets its tables when it exists. */
export async function ensurePublication(client: pg.Client, name: string, tables: readonly CapturedTable[]): Promise<void> {
  const list = tables.map((t) => qualified(t.schema, t.table)).join(', ');
  const exists = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name]);
  if (exists.rowCount === 0) await client.query(`CREATE PUBLICATION ${quoteIdent(name)} FOR TABLE ${list}`);
  else await client.query(`ALTER PUBLICATION ${quoteIdent(name)} SET TABLE ${list}`);
}

/** What the server says of a replication slot. */
export interface SlotInfo {
  readonly plugin: string | null;
  readonly database: string | null;
  readonly active: boolean;
  /** The position the slot confirmed (null for a physical slot). */
  readonly confirmedLsn: bigint | null;
}

/** The slot named `slot`, or null when there is none. */
export async function slotInfo(client: pg.Client, slot: string): Promise<SlotInfo | null> {
  const res = await client.query<{ plugin: string | null; database: string | null; active: boolean; confirmed: string | null }>(
    'SELECT plugin, database, active, confirmed_flush_lsn::text AS confirmed FROM pg_replication_slots WHERE slot_name = $1',
    [slot],
  );
  const row = res.rows[0];
  if (row === undefined) return null;
  return { plugin: row.plugin, database: row.database, active: row.active, confirmedLsn: row.confirmed === null ? null : parseLsn(row.confirmed) };
}

/** Drops the slot (it must be inactive); nothing when it does not exist. */
export async function dropSlot(client: pg.Client, slot: string): Promise<void> {
  await client.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1', [slot]);
}

/** What `dropCdcSlot` found and did. */
export interface DroppedSlot {
  readonly slot: boolean;
  readonly publication: boolean;
}

/**
 * Drops a CDC source's replication slot and its publication of the same name (`weir cdc
 * drop-slot`); null, dropping nothing, when a connection streams the slot (a running job).
 */
export async function dropCdcSlot(client: pg.Client, name: string): Promise<DroppedSlot | null> {
  const info = await slotInfo(client, name);
  if (info?.active === true) return null;
  if (info !== null) await dropSlot(client, name);
  const publication = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name]);
  if (publication.rowCount === 1) await client.query(`DROP PUBLICATION ${quoteIdent(name)}`);
  return { slot: info !== null, publication: publication.rowCount === 1 };
}
