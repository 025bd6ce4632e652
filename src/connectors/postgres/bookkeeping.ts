/**
 * The two-phase sink's bookkeeping table, `weir_sink_commits`: each prepared transaction inserts
 * its own row (sink, gid, subtask, checkpoint), so the row becomes visible exactly when the
 * transaction's rows do. It tells a committed transaction from a rolled-back one after the prepared
 * transaction is gone, and the newest checkpoint a sink committed.
 */
import type pg from 'pg';
import { qualified } from './sql.ts';

/** Rows of checkpoints this many ids older than a sink's newest commit are pruned. */
export const RETAINED_CHECKPOINT_IDS = 1000;

export const BOOKKEEPING_TABLE = 'weir_sink_commits';

/** The bookkeeping table in `schema`, quoted. */
export function bookkeepingTable(schema: string): string {
  return qualified(schema, BOOKKEEPING_TABLE);
}

/**
 * Creates the table unless it exists. Existence is checked first, because DDL on the table would
 * wait for the locks of lingering prepared transactions, which only this sink's recovery releases.
 * Concurrent subtasks racing to create it is fine.
 */
export async function ensureBookkeeping(client: pg.Client, schema: string): Promise<void> {
  const table = bookkeepingTable(schema);
  const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [table]);
  if (exists.rows[0]?.t != null) return;
  try {
    await client.query('BEGIN');
    await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
      sink text NOT NULL,
      gid text PRIMARY KEY,
      subtask integer NOT NULL,
      checkpoint_id bigint NOT NULL,
      committed_at timestamptz NOT NULL DEFAULT now())`);
    await client.query(`CREATE INDEX IF NOT EXISTS ${BOOKKEEPING_TABLE}_sink_checkpoint ON ${table} (sink, checkpoint_id)`);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    // another subtask created it between IF NOT EXISTS and the insert into the catalog
    const code = (err as { code?: unknown }).code;
    if (code !== '23505' && code !== '42P07') throw err;
  }
}

/** The statement a prepared transaction runs to record itself: parameters sink, gid, subtask, checkpoint. */
export function recordStatement(schema: string): string {
  return `INSERT INTO ${bookkeepingTable(schema)} (sink, gid, subtask, checkpoint_id) VALUES ($1, $2, $3, $4)`;
}

/** The newest checkpoint committed for `sinkId` (null when none, or when the table does not exist yet). */
export async function newestCommittedCheckpoint(client: pg.Client, schema: string, sinkId: string): Promise<number | null> {
  const exists = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [bookkeepingTable(schema)]);
  if (exists.rows[0]?.t == null) return null;
  const res = await client.query<{ newest: string | null }>(`SELECT max(checkpoint_id)::text AS newest FROM ${bookkeepingTable(schema)} WHERE sink = $1`, [
    sinkId,
  ]);
  const newest = res.rows[0]?.newest;
  return newest == null ? null : Number(newest);
}

/** Whether the transaction `gid` committed (its row is there). */
export async function isRecorded(client: pg.Client, schema: string, gid: string): Promise<boolean> {
  const res = await client.query(`SELECT 1 FROM ${bookkeepingTable(schema)} WHERE gid = $1`, [gid]);
  return res.rowCount === 1;
}

/** Deletes rows of `sinkId` far older than `newestCheckpointId`, keeping the table bounded. */
export async function pruneBookkeeping(client: pg.Client, schema: string, sinkId: string, newestCheckpointId: number): Promise<void> {
  const below = newestCheckpointId - RETAINED_CHECKPOINT_IDS;
  if (below <= 0) return;
  await client.query(`DELETE FROM ${bookkeepingTable(schema)} WHERE sink = $1 AND checkpoint_id < $2`, [sinkId, below]);
}

/** Prepared transactions in the current database whose gid starts with `prefix`. */
export async function preparedWithPrefix(client: pg.Client, prefix: string): Promise<string[]> {
  const res = await client.query<{ gid: string }>('SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND left(gid, $2) = $1 ORDER BY gid', [
    prefix,
    prefix.length,
  ]);
  return res.rows.map((r) => r.gid);
}
