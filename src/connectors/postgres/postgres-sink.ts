/**
 * The PostgreSQL sink: rows into a table, exactly-once with prepared transactions (two-phase
 * commit) or at-least-once with plain batched statements, optionally as upserts keyed by columns.
 * Written against the public two-phase sink API (src/runtime/sink.ts) like any user's sink.
 *
 * Exactly-once needs `max_prepared_transactions` > 0 on the server (at least the sink's
 * parallelism times the checkpoints in flight, plus one). Each subtask's rows of a checkpoint epoch
 * are one transaction, prepared on the barrier under the gid
 * `weir:<sink id>:<subtask>:<checkpoint>:<run id>` and committed when the checkpoint completed.
 * On restore the prepared transactions the checkpoint names are committed (again: a gid that no
 * longer exists is fine when the bookkeeping table shows it committed), and this sink's prepared
 * transactions of other runs that it does not name are rolled back. A database cannot take
 * committed rows back, so the sink has no `rollBackAfter`: recovery refuses to restore a checkpoint
 * older than the newest one the sink committed, unless duplicates are accepted.
 */
import { ConfigError } from '../../core/errors.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';
import { newestCommittedCheckpoint } from './bookkeeping.ts';
import { connect } from './connection.ts';
import { connectorError, type PostgresConnectionOptions, type ResolvedConnection, resolveConnection } from './settings.ts';
import { MAX_PARAMETERS } from './sql.ts';
import { PostgresSinkWriter, type WriterSettings } from './postgres-writer.ts';

/** Where and how a `PostgresSink` writes. */
export interface PostgresSinkOptions<T> {
  /** The table rows go into (it must exist). */
  readonly table: string;
  /** Its schema (default `public`); the bookkeeping table `weir_sink_commits` is created there. */
  readonly schema?: string;
  /** The columns each row fills, in the order `toRow` returns values. */
  readonly columns: readonly string[];
  /** The values of one record's row, in column order (default: the record's properties named like the columns). */
  readonly toRow?: (record: T) => readonly unknown[];
  /** `exactly-once` (default): two-phase commit with prepared transactions; `at-least-once`: plain statements, flushed on each checkpoint. */
  readonly guarantee?: 'exactly-once' | 'at-least-once';
  /** Columns of a unique key of the table: rows update the row with their key (`ON CONFLICT (...) DO UPDATE`). */
  readonly upsertKey?: readonly string[];
  /**
   * Records for which it returns true delete the row with their `upsertKey` (which it needs)
   * instead of writing one: an aggregate whose group emptied, say. Default: none.
   */
  readonly deleteWhen?: (record: T) => boolean;
  /** Rows per INSERT statement (default 1000, fewer when the columns would exceed 65535 parameters). */
  readonly batchRows?: number;
  /** Server and credentials; unset fields come from the PG* environment variables. */
  readonly connection?: PostgresConnectionOptions;
  /** Names this sink's prepared transactions and bookkeeping rows (default `<schema>.<table>`); give two exactly-once sinks of one table different ids. */
  readonly id?: string;
}

/** Writes records as rows of a PostgreSQL table (see the module comment). */
export class PostgresSink<T> implements TwoPhaseCommitSink<T, string> {
  /** A two-phase-commit sink (in at-least-once mode its pre-commit only flushes). */
  readonly kind = 'two-phase-commit' as const;
  /** Display name of the sink operator. */
  readonly name: string;
  private readonly settings: WriterSettings;

  /**
   * A sink writing into `options.table`; the options are checked here.
   * @param options table, columns, guarantee, upsert key, batch size and connection.
   */
  constructor(options: PostgresSinkOptions<T>) {
    this.settings = settingsOf(options as PostgresSinkOptions<unknown>);
    this.name = `postgres-sink ${this.settings.target.schema}.${this.settings.target.table}`;
  }

  /** A writer for one subtask and attempt. */
  createWriter(): TwoPhaseCommitWriter<T, string> {
    return new PostgresSinkWriter(this.settings);
  }

  /** The newest checkpoint this sink committed, from its bookkeeping rows; always null at-least-once (duplicates are that mode's contract). */
  async newestCommitted(): Promise<number | null> {
    if (!this.settings.exactlyOnce) return null;
    const c = this.settings.connection;
    let lost: Error | null = null;
    const client = await connect(c, `sink ${this.settings.sinkId} bookkeeping`, (err) => {
      lost = err;
    });
    try {
      return await newestCommittedCheckpoint(client, this.settings.target.schema, this.settings.sinkId);
    } catch (err) {
      throw lost ?? connectorError(c, `sink ${this.settings.sinkId}: reading the newest committed checkpoint`, err);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

function checkedConnection(options: PostgresConnectionOptions | undefined): ResolvedConnection {
  try {
    return resolveConnection(options);
  } catch (err) {
    throw new ConfigError('PostgresSink.connection', (err as Error).message);
  }
}

function settingsOf(o: PostgresSinkOptions<unknown>): WriterSettings {
  const where = 'PostgresSink';
  if (typeof o.table !== 'string' || o.table.length === 0) throw new ConfigError(`${where}.table`, 'must name a table');
  const schema = o.schema ?? 'public';
  if (!Array.isArray(o.columns) || o.columns.length === 0) throw new ConfigError(`${where}.columns`, 'must list at least one column');
  if (new Set(o.columns).size !== o.columns.length) throw new ConfigError(`${where}.columns`, `lists a column twice: ${o.columns.join(', ')}`);
  for (const k of o.upsertKey ?? []) {
    if (!o.columns.includes(k)) throw new ConfigError(`${where}.upsertKey`, `column '${k}' is not among the columns (${o.columns.join(', ')})`);
  }
  const guarantee = o.guarantee ?? 'exactly-once';
  if (guarantee !== 'exactly-once' && guarantee !== 'at-least-once')
    throw new ConfigError(`${where}.guarantee`, `'${String(guarantee)}' is neither 'exactly-once' nor 'at-least-once'`);
  const most = Math.floor(MAX_PARAMETERS / o.columns.length);
  const batchRows = o.batchRows ?? Math.min(1000, most);
  if (!Number.isInteger(batchRows) || batchRows < 1 || batchRows > most)
    throw new ConfigError(`${where}.batchRows`, `must be an integer from 1 to ${most} for ${o.columns.length} column(s), got ${batchRows}`);
  const columns = o.columns;
  const toRow = o.toRow ?? ((record: unknown) => columns.map((c) => (record as Record<string, unknown>)[c]));
  const checkedRow = (record: unknown): readonly unknown[] => {
    const row = toRow(record);
    if (row.length !== columns.length)
      throw new ConfigError(`${where}.toRow`, `returned ${row.length} value(s) for ${columns.length} column(s) (${columns.join(', ')})`);
    return row;
  };
  if (o.deleteWhen !== undefined && typeof o.deleteWhen !== 'function') throw new ConfigError(`${where}.deleteWhen`, 'must be a function');
  if (o.deleteWhen !== undefined && (o.upsertKey ?? []).length === 0)
    throw new ConfigError(`${where}.deleteWhen`, 'needs upsertKey: a delete removes the row with the key of its record');
  const connection = checkedConnection(o.connection);
  return {
    sinkId: o.id ?? `${schema}.${o.table}`,
    target: { schema, table: o.table, columns, upsertKey: o.upsertKey },
    exactlyOnce: guarantee === 'exactly-once',
    batchRows,
    toRow: checkedRow,
    deleteWhen: o.deleteWhen ?? null,
    connection,
  };
}
