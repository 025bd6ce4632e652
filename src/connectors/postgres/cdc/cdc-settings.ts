/** The CDC source's options, checked, with defaults filled in. */
import { ConfigError } from '../../../core/errors.ts';
import type { PostgresConnectionOptions, ResolvedConnection } from '../settings.ts';
import { resolveConnection } from '../settings.ts';
import { parseTableName } from './cdc-names.ts';
import type { ChangeRecord } from './change-record.ts';
import type { CapturedTable } from './captured-table.ts';

/** What a `PostgresCdcSource` captures and how. */
export interface PostgresCdcSourceOptions {
  /** The captured tables, `schema.table` or `table` (schema `public`); they must exist. */
  readonly tables: readonly string[];
  /**
   * Names the replication slot and publication `weir_cdc_<id>` (default: the operator's uid). Two
   * jobs capturing at the same time need different ids; one job keeps its id across restarts.
   */
  readonly id?: string;
  /** Copy the tables' rows first, consistent with the stream that follows (default true); false streams only changes after the slot's creation. */
  readonly snapshot?: boolean;
  /** Changes held between the server and the job before intake pauses (default 10000): half in the reader's intake, half in the fetch queue. */
  readonly bufferChanges?: number;
  /** Rows per fetch of the snapshot copy (default 5000). */
  readonly snapshotBatchRows?: number;
  /** Milliseconds the source waits before polling again when no change is queued (default 5). */
  readonly idleWaitMs?: number;
  /**
   * Ends the source after the first change for which it returns true (that change is emitted), so
   * the job can finish: for backfills and tests. Default: never; the source runs until cancelled.
   *
   * After a restore inside the initial copy, the rest of the copy is read from a later snapshot, so
   * the changes committed before that snapshot to rows copied earlier still have to be streamed. A
   * match before the stream has replayed them (on a row of the resumed copy, say) does not end the
   * source at once: it ends once they are emitted (with any other change streamed up to that point),
   * and this deferral is checkpointed, so a restore in between still ends there.
   */
  readonly endWhen?: (change: ChangeRecord) => boolean;
  /** Server and credentials; unset fields come from the PG* environment variables. */
  readonly connection?: PostgresConnectionOptions;
}

export interface CdcSettings {
  readonly connection: ResolvedConnection;
  readonly tables: readonly CapturedTable[];
  readonly id: string | null;
  readonly snapshot: boolean;
  readonly bufferChanges: number;
  readonly snapshotBatchRows: number;
  readonly idleWaitMs: number;
  readonly endWhen: ((change: ChangeRecord) => boolean) | null;
}

const WHERE = 'PostgresCdcSource';

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${WHERE}.${name}`, `must be an integer >= 1, got ${String(value)}`);
  return value;
}

/** @throws ConfigError naming the option at fault. */
export function cdcSettingsOf(o: PostgresCdcSourceOptions): CdcSettings {
  if (!Array.isArray(o.tables) || o.tables.length === 0) throw new ConfigError(`${WHERE}.tables`, 'must list at least one table');
  const tables = o.tables.map((name) => {
    const t = typeof name === 'string' ? parseTableName(name) : null;
    if (t === null) throw new ConfigError(`${WHERE}.tables`, `'${String(name)}' is not a table name (table or schema.table)`);
    return t;
  });
  const keys = tables.map((t) => `${t.schema}.${t.table}`);
  if (new Set(keys).size !== keys.length) throw new ConfigError(`${WHERE}.tables`, `lists a table twice: ${keys.join(', ')}`);
  if (o.id !== undefined && (typeof o.id !== 'string' || o.id.length === 0)) throw new ConfigError(`${WHERE}.id`, 'must be a non-empty string');
  if (o.endWhen !== undefined && typeof o.endWhen !== 'function') throw new ConfigError(`${WHERE}.endWhen`, 'must be a function');
  let connection: ResolvedConnection;
  try {
    connection = resolveConnection(o.connection);
  } catch (err) {
    throw new ConfigError(`${WHERE}.connection`, (err as Error).message);
  }
  return {
    connection,
    tables,
    id: o.id ?? null,
    snapshot: o.snapshot ?? true,
    bufferChanges: positiveInt('bufferChanges', o.bufferChanges, 10_000),
    snapshotBatchRows: positiveInt('snapshotBatchRows', o.snapshotBatchRows, 5_000),
    idleWaitMs: positiveInt('idleWaitMs', o.idleWaitMs, 5),
    endWhen: o.endWhen ?? null,
  };
}
