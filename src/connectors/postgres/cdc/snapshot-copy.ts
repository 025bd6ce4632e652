/**
 * The initial snapshot: rows of the captured tables as of a slot's consistent point, read in a
 * repeatable-read transaction that imports the snapshot the slot exported, in key order (see
 * snapshot-keys.ts), through a cursor in batches so memory stays bounded.
 */
import type pg from 'pg';
import type { CapturedTable } from './captured-table.ts';
import type { CopyQuery, KeyKind, TableKey } from './snapshot-keys.ts';
import { keyKindOf } from './snapshot-keys.ts';
import { qualified } from '../sql.ts';

/**
 * Imports `snapshotName`; must run before the exporting replication connection runs another
 * command (the export lives only until then). The rows are read later by `copyTables`.
 */
export async function importSnapshot(client: pg.Client, snapshotName: string): Promise<void> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  await client.query(`SET TRANSACTION SNAPSHOT '${snapshotName.replace(/'/g, "''")}'`);
}

/** The primary key of `table` when every column's order is reproducible (snapshot-keys.ts), else null. */
export async function tableKeyOf(client: pg.Client, table: CapturedTable): Promise<TableKey | null> {
  const res = await client.query<{ name: string; oid: number }>(
    `SELECT a.attname AS name, a.atttypid::int AS oid
       FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, pos)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
      WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY k.pos`,
    [qualified(table.schema, table.table)],
  );
  if (res.rows.length === 0) return null;
  const kinds: KeyKind[] = [];
  for (const r of res.rows) {
    const kind = keyKindOf(r.oid);
    if (kind === null) return null;
    kinds.push(kind);
  }
  return { columns: res.rows.map((r) => r.name), kinds };
}

/**
 * Runs the copy queries in order, `batchRows` rows at a time, handing each batch to `onRows` and
 * awaiting it (the reader's backpressure; `last` marks the final batch, maybe empty), then ends the
 * transaction.
 */
export async function copyTables(
  client: pg.Client,
  queries: readonly CopyQuery[],
  batchRows: number,
  onRows: (table: CapturedTable, rows: ReadonlyArray<Record<string, unknown>>, last: boolean) => Promise<void> | void,
): Promise<void> {
  if (queries.length === 0) await onRows({ schema: '', table: '' }, [], true);
  for (const [i, q] of queries.entries()) {
    await client.query(`DECLARE weir_snapshot NO SCROLL CURSOR FOR ${q.text}`, [...q.values]);
    for (;;) {
      const res = await client.query<Record<string, unknown>>(`FETCH FORWARD ${batchRows} FROM weir_snapshot`);
      const ends = res.rows.length < batchRows;
      await onRows(q.table, res.rows, ends && i === queries.length - 1);
      if (ends) break;
    }
    await client.query('CLOSE weir_snapshot');
  }
  await client.query('COMMIT');
}
