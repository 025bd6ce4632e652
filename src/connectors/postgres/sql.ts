/**
 * The PostgreSQL sink's pure parts: identifier quoting, batched INSERT / upsert statements, the
 * global transaction ids of prepared transactions, and which lingering ones recovery rolls back.
 * Nothing here talks to a server, so every decision has unit tests.
 */

/** A double-quoted SQL identifier (a quote inside is doubled). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Where rows go: `schema.table` and its columns, in row order. */
export interface InsertTarget {
  readonly schema: string;
  readonly table: string;
  readonly columns: readonly string[];
  /** Columns of a unique key: rows with an existing key update it (`ON CONFLICT ... DO UPDATE`). */
  readonly upsertKey?: readonly string[];
}

/** The quoted, schema-qualified name of a table. */
export function qualified(schema: string, table: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

/** A multi-row INSERT (or upsert) of `rowCount` rows with positional parameters $1..$n. */
export function insertStatement(target: InsertTarget, rowCount: number): string {
  const width = target.columns.length;
  const rows: string[] = [];
  for (let r = 0; r < rowCount; r++) {
    const params: string[] = [];
    for (let c = 1; c <= width; c++) params.push(`$${r * width + c}`);
    rows.push(`(${params.join(',')})`);
  }
  const head = `INSERT INTO ${qualified(target.schema, target.table)} (${target.columns.map(quoteIdent).join(', ')}) VALUES ${rows.join(',')}`;
  const key = target.upsertKey;
  if (key === undefined || key.length === 0) return head;
  const rest = target.columns.filter((c) => !key.includes(c));
  const action = rest.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${rest.map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`).join(', ')}`;
  return `${head} ON CONFLICT (${key.map(quoteIdent).join(', ')}) ${action}`;
}

/**
 * Rows of one upsert statement with one row per key, the last one written: PostgreSQL refuses a
 * statement that updates the same row twice, and the last write is what sequential upserts leave.
 */
export function lastPerKey(rows: ReadonlyArray<readonly unknown[]>, keyIndexes: readonly number[]): Array<readonly unknown[]> {
  const byKey = new Map<string, readonly unknown[]>();
  for (const row of rows) {
    const key = JSON.stringify(keyIndexes.map((i) => row[i]));
    byKey.delete(key); // re-inserted last, so the map keeps the order of each key's last write
    byKey.set(key, row);
  }
  return [...byKey.values()];
}

/**
 * A DELETE of the rows with `keyCount` keys of `target.upsertKey` (positional parameters, key
 * columns in order per key).
 */
export function deleteStatement(target: InsertTarget, keyCount: number): string {
  const key = target.upsertKey ?? [];
  const width = key.length;
  const keys: string[] = [];
  for (let r = 0; r < keyCount; r++) {
    const params: string[] = [];
    for (let c = 1; c <= width; c++) params.push(`$${r * width + c}`);
    keys.push(`(${params.join(',')})`);
  }
  return `DELETE FROM ${qualified(target.schema, target.table)} WHERE (${key.map(quoteIdent).join(', ')}) IN (${keys.join(',')})`;
}

/** A row to write, or (`remove`) a row whose key is to be deleted. */
export interface RowAction {
  readonly row: readonly unknown[];
  readonly remove: boolean;
}

/**
 * The actions of one batch as one upsert and one delete: per key only the last action counts (as
 * sequential statements would leave it), so the two statements can run in either order. Returns
 * the rows to upsert and the keys (values of `keyIndexes`) to delete.
 */
export function lastActionPerKey(
  actions: readonly RowAction[],
  keyIndexes: readonly number[],
): { upserts: Array<readonly unknown[]>; deletes: Array<readonly unknown[]> } {
  const byKey = new Map<string, RowAction>();
  for (const a of actions) {
    const key = JSON.stringify(keyIndexes.map((i) => a.row[i]));
    byKey.delete(key);
    byKey.set(key, a);
  }
  const upserts: Array<readonly unknown[]> = [];
  const deletes: Array<readonly unknown[]> = [];
  for (const a of byKey.values()) {
    if (a.remove) deletes.push(keyIndexes.map((i) => a.row[i]));
    else upserts.push(a.row);
  }
  return { upserts, deletes };
}

/** The largest number of parameters one statement may carry (the protocol counts them in 16 bits). */
export const MAX_PARAMETERS = 65_535;

// ---- global transaction ids: weir:<sink>:<subtask>:<checkpoint>:<runId> ----

/** PostgreSQL limits a prepared transaction's id to 200 bytes. */
const GID_BYTES_MAX = 200;

/** A sink id as a gid part: characters outside [A-Za-z0-9_.-] are escaped, so ':' never occurs in it. */
function gidSafe(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The prefix every prepared transaction of the sink `sinkId` carries. */
export function gidPrefix(sinkId: string): string {
  return `weir:${gidSafe(sinkId)}:`;
}

/** The id of the transaction subtask `subtask` of run `runId` prepares for checkpoint `checkpointId`. */
export function formatGid(sinkId: string, subtask: number, checkpointId: number, runId: string): string {
  const gid = `${gidPrefix(sinkId)}${subtask}:${checkpointId}:${runId}`;
  if (Buffer.byteLength(gid) > GID_BYTES_MAX) throw new RangeError(`prepared transaction id ${gid} exceeds ${GID_BYTES_MAX} bytes: give the sink a shorter id`);
  return gid;
}

/** What a gid of this sink says; null when `gid` is not one of this sink's. */
export function parseGid(gid: string, sinkId: string): { subtask: number; checkpointId: number; runId: string } | null {
  const prefix = gidPrefix(sinkId);
  if (!gid.startsWith(prefix)) return null;
  const m = /^(\d+):(\d+):([0-9a-z-]+)$/.exec(gid.slice(prefix.length));
  if (m === null) return null;
  return { subtask: Number(m[1]), checkpointId: Number(m[2]), runId: m[3]! };
}

/**
 * Prepared transactions a subtask opening in run `runId` rolls back: this sink's, of another run,
 * that no restored committable names (those the operator commits). Transactions of this run belong
 * to subtasks that may already be writing, so they are left alone.
 */
export function lingeringGids(prepared: readonly string[], sinkId: string, runId: string, restored: ReadonlySet<string>): string[] {
  return prepared.filter((gid) => {
    const parsed = parseGid(gid, sinkId);
    return parsed !== null && parsed.runId !== runId && !restored.has(gid);
  });
}

/** A gid as an SQL string literal (PREPARE / COMMIT PREPARED take no parameters). */
export function gidLiteral(gid: string): string {
  return `'${gid.replace(/'/g, "''")}'`;
}
