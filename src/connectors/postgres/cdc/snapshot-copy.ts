/**
 * The initial snapshot: every row of the captured tables as of the slot's consistent point, read in
 * a repeatable-read transaction that imports the snapshot the slot exported, through a cursor in
 * batches so memory stays bounded.
 */
import type pg from 'pg';
import { qualified } from '../sql.ts';
import type { CapturedTable } from './slot-admin.ts';

/**
 * Imports `snapshotName`; must run before the exporting replication connection runs another
 * command (the export lives only until then). The rows are read later by `copyTables`.
 */
export async function importSnapshot(client: pg.Client, snapshotName: string): Promise<void> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  await client.query(`SET TRANSACTION SNAPSHOT '${snapshotName.replace(/'/g, "''")}'`);
}

/**
 * Reads every table in order, `batchRows` rows at a time, handing each batch to `onRows` and
 * awaiting it (the reader's backpressure; `last` marks the final batch, maybe empty), then ends the
 * transaction.
 */
export async function copyTables(
  client: pg.Client,
  tables: readonly CapturedTable[],
  batchRows: number,
  onRows: (table: CapturedTable, rows: ReadonlyArray<Record<string, unknown>>, last: boolean) => Promise<void> | void,
): Promise<void> {
  for (const [i, t] of tables.entries()) {
    await client.query(`DECLARE weir_snapshot NO SCROLL CURSOR FOR SELECT * FROM ${qualified(t.schema, t.table)}`);
    for (;;) {
      const res = await client.query<Record<string, unknown>>(`FETCH FORWARD ${batchRows} FROM weir_snapshot`);
      const ends = res.rows.length < batchRows;
      await onRows(t, res.rows, ends && i === tables.length - 1);
      if (ends) break;
    }
    await client.query('CLOSE weir_snapshot');
  }
  await client.query('COMMIT');
}
