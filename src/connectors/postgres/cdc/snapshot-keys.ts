/**
 * What makes the initial snapshot resumable: tables are copied in primary-key order, the key of
 * the last row emitted is checkpointed, and a restore in the middle of the copy reads the rest
 * (the rows after that key, then the later tables) from a new snapshot at a later LSN. Each such
 * restore adds a boundary: rows after it were read as of its LSN, so a streamed change of such a
 * row committed at or before that LSN is already in the copy and is skipped. Pure: key order in
 * JavaScript matches the copy's ORDER BY (numbers numerically, text and uuid by bytes, `COLLATE "C"`).
 */
import type { CapturedTable } from './captured-table.ts';
import { qualified, quoteIdent } from '../sql.ts';

/** How key values of a column compare: `number` (int2, int4, oid), `bigint` (int8, given as text), `text` (text, varchar, uuid). */
export type KeyKind = 'number' | 'bigint' | 'text';

/** The primary key of a captured table, when every column has a kind (else the snapshot of the job is not resumable). */
export interface TableKey {
  readonly columns: readonly string[];
  readonly kinds: readonly KeyKind[];
}

const KINDS: ReadonlyMap<number, KeyKind> = new Map<number, KeyKind>([
  [21, 'number'],
  [23, 'number'],
  [26, 'number'],
  [20, 'bigint'],
  [25, 'text'],
  [1043, 'text'],
  [2950, 'text'],
]);

/** The kind of a key column of type `typeOid`, or null when its order is not reproduced here. */
export function keyKindOf(typeOid: number): KeyKind | null {
  return KINDS.get(typeOid) ?? null;
}

/** A row's key values, in key column order. */
export type KeyValues = readonly unknown[];

function compareValue(kind: KeyKind, a: unknown, b: unknown): number {
  switch (kind) {
    case 'number':
      return Number(a) - Number(b);
    case 'bigint': {
      const x = BigInt(String(a));
      const y = BigInt(String(b));
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'text':
      return Buffer.compare(Buffer.from(String(a)), Buffer.from(String(b)));
  }
}

/** Orders two keys of one table as the copy's ORDER BY does. */
export function compareKeys(key: TableKey, a: KeyValues, b: KeyValues): number {
  for (let i = 0; i < key.kinds.length; i++) {
    const c = compareValue(key.kinds[i]!, a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

/** Rows of table index `table` with keys after `key` (all of its rows when `key` is null) were read as of `lsn`. */
export interface SnapshotBoundary {
  readonly table: number;
  readonly key: KeyValues | null;
  readonly lsn: bigint;
}

/**
 * Whether a streamed change of row (`table`, `key`) committed at `commitLsn` is already in the
 * copy: the newest boundary the row lies after decides (boundaries come in copy order, each at a
 * later LSN).
 */
export function inCopy(boundaries: readonly SnapshotBoundary[], keys: readonly (TableKey | null)[], table: number, key: KeyValues, commitLsn: bigint): boolean {
  for (let i = boundaries.length - 1; i >= 0; i--) {
    const b = boundaries[i]!;
    const after = table > b.table || (table === b.table && (b.key === null || compareKeys(keys[table]!, key, b.key) > 0));
    if (after) return commitLsn <= b.lsn;
  }
  return false;
}

/** One query of the copy: a table's rows in key order, after a key when resuming inside it. */
export interface CopyQuery {
  readonly table: CapturedTable;
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The copy from table index `fromTable` on, its rows after `fromKey` (null: all). */
export function copyQueries(tables: readonly CapturedTable[], keys: readonly (TableKey | null)[], fromTable: number, fromKey: KeyValues | null): CopyQuery[] {
  const out: CopyQuery[] = [];
  for (let i = fromTable; i < tables.length; i++) {
    const t = tables[i]!;
    const key = keys[i] ?? null;
    const cols = key === null ? [] : key.columns.map((c, j) => (key.kinds[j] === 'text' ? `${quoteIdent(c)} COLLATE "C"` : quoteIdent(c)));
    const order = cols.length === 0 ? '' : ` ORDER BY ${cols.join(', ')}`;
    const resumeKey = i === fromTable ? fromKey : null;
    if (resumeKey === null || key === null) {
      out.push({ table: t, text: `SELECT * FROM ${qualified(t.schema, t.table)}${order}`, values: [] });
    } else {
      const params = cols.map((_, j) => `$${j + 1}`);
      out.push({
        table: t,
        text: `SELECT * FROM ${qualified(t.schema, t.table)} WHERE (${cols.join(', ')}) > (${params.join(', ')})${order}`,
        values: resumeKey,
      });
    }
  }
  return out;
}
