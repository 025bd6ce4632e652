/** The records a `PostgresCdcSource` emits: one per row change, typed by kind. */

/** A row as column name to value, parsed like the `pg` client parses query results (int8 and numeric as strings). */
export type ChangeRow = Readonly<Record<string, unknown>>;

/** What all change records carry. */
interface ChangeBase {
  /** Schema of the changed table. */
  readonly schema: string;
  /** The changed table. */
  readonly table: string;
  /**
   * Commit LSN (`X/Y`) of the transaction that made the change; for rows of the initial snapshot,
   * the LSN the snapshot is consistent with (the stream continues after it).
   */
  readonly lsn: string;
  /** Commit time of the transaction, milliseconds since the Unix epoch; null for snapshot rows. */
  readonly commitTimeMs: number | null;
  /** True for rows read by the initial snapshot (always `insert`s). */
  readonly snapshot: boolean;
}

/** A row inserted (or read by the initial snapshot). */
export interface InsertChange extends ChangeBase {
  /** Tells the kinds apart. */
  readonly kind: 'insert';
  /** Always null: there was no row before. */
  readonly before: null;
  /** The inserted row. */
  readonly after: ChangeRow;
}

/**
 * A row updated. `before` is the old row with REPLICA IDENTITY FULL on the table; with the default
 * identity it holds the old key columns only when the key changed, and is null otherwise.
 */
export interface UpdateChange extends ChangeBase {
  /** Tells the kinds apart. */
  readonly kind: 'update';
  /** The old row (see above for what the table's replica identity gives). */
  readonly before: ChangeRow | null;
  /** The row after the update. */
  readonly after: ChangeRow;
}

/** A row deleted: `before` is the old row with REPLICA IDENTITY FULL, its key columns otherwise. */
export interface DeleteChange extends ChangeBase {
  /** Tells the kinds apart. */
  readonly kind: 'delete';
  /** The deleted row (or its key columns). */
  readonly before: ChangeRow;
  /** Always null: no row remains. */
  readonly after: null;
}

/** One row change of a captured table. */
export type ChangeRecord = InsertChange | UpdateChange | DeleteChange;
