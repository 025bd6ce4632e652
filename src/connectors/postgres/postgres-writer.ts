/**
 * One subtask's writer of the PostgreSQL sink. Records are buffered and written in batches on a
 * dedicated data connection; statements run one after another on a promise chain, so `write` stays
 * synchronous. Exactly-once: the rows of a checkpoint epoch go into one transaction, which the
 * barrier closes with `PREPARE TRANSACTION '<gid>'` (the gid is the committable); commits and
 * recovery clean-up run on a second, control connection, because `COMMIT PREPARED` cannot run
 * inside the transaction the data connection already has open for the next epoch.
 */
import type pg from 'pg';
import { type ConnectorError, errorMessage } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitWriter } from '../../runtime/sink.ts';
import { ensureBookkeeping, isRecorded, preparedWithPrefix, pruneBookkeeping, recordStatement } from './bookkeeping.ts';
import { connect } from './connection.ts';
import { connectorError, type ResolvedConnection, sqlState } from './settings.ts';
import {
  deleteStatement,
  formatGid,
  gidLiteral,
  gidPrefix,
  type InsertTarget,
  insertStatement,
  lastActionPerKey,
  lastPerKey,
  lingeringGids,
  parseGid,
} from './sql.ts';

/** The server's answer when another session holds the prepared transaction. */
function isBusy(err: unknown): boolean {
  return sqlState(err) === NOT_IN_PREREQUISITE_STATE && /is busy/.test(errorMessage(err));
}

function stillBusy(err: unknown, waitedMs: number): Error {
  return Object.assign(new Error(`${errorMessage(err)}, still after waiting ${waitedMs} ms`), { code: NOT_IN_PREREQUISITE_STATE });
}

/** What a writer needs from its sink: everything resolved and validated. */
export interface WriterSettings {
  readonly sinkId: string;
  readonly target: InsertTarget;
  readonly exactlyOnce: boolean;
  readonly batchRows: number;
  readonly toRow: (record: unknown) => readonly unknown[];
  /** Records for which it holds delete the row with their upsert key instead (null: none do). */
  readonly deleteWhen: ((record: unknown) => boolean) | null;
  readonly connection: ResolvedConnection;
}

/** SQLSTATE undefined_object: COMMIT/ROLLBACK PREPARED of a gid that does not exist (any more). */
const UNDEFINED_OBJECT = '42704';
/** SQLSTATE object_not_in_prerequisite_state, which "prepared transaction ... is busy" carries. */
const NOT_IN_PREREQUISITE_STATE = '55000';
/**
 * How long recovery waits for a prepared transaction another session still holds: the session of
 * a killed run that was inside PREPARE TRANSACTION holds it until the server finished the prepare
 * (and noticed the client is gone). Waits double from the first to the longest.
 */
export const BUSY_WAIT: { readonly firstMs: number; readonly longestMs: number; readonly totalMs: number } = { firstMs: 10, longestMs: 500, totalMs: 30_000 };

export class PostgresSinkWriter implements TwoPhaseCommitWriter<unknown, string> {
  private data: pg.Client | null = null;
  private control: pg.Client | null = null;
  private failure: ConnectorError | null = null;
  private tail: Promise<void> = Promise.resolve();
  private batch: Array<readonly unknown[]> = [];
  /** With `deleteWhen`: whether each row of `batch` deletes its key. */
  private removals: boolean[] = [];
  private inTransaction = false;
  private epochRows = 0;
  private subtask = 0;
  private runId = '';
  /** The committables of the restored checkpoint: never rolled back. */
  private restored: ReadonlySet<string> = new Set();
  private readonly keyIndexes: number[];

  constructor(private readonly s: WriterSettings) {
    this.keyIndexes = (s.target.upsertKey ?? []).map((k) => s.target.columns.indexOf(k));
  }

  async open(ctx: RuntimeContext, restored: readonly string[]): Promise<void> {
    this.subtask = ctx.subtaskIndex;
    this.runId = ctx.runId;
    this.restored = new Set(restored);
    const onError = (err: ConnectorError): void => {
      this.failure ??= err;
    };
    this.control = await connect(this.s.connection, `sink ${this.s.sinkId} control ${ctx.subtaskIndex}`, onError);
    this.data = await connect(this.s.connection, `sink ${this.s.sinkId} data ${ctx.subtaskIndex}`, onError);
    if (!this.s.exactlyOnce) return;
    try {
      await ensureBookkeeping(this.control, this.s.target.schema);
    } catch (err) {
      throw this.failed('creating the bookkeeping table', err);
    }
    await this.rollBackOtherRuns();
  }

  write(record: unknown): void {
    if (this.failure) throw this.failure;
    this.batch.push(this.s.toRow(record));
    if (this.s.deleteWhen !== null) this.removals.push(this.s.deleteWhen(record));
    if (this.batch.length >= this.s.batchRows) this.flushBatch();
  }

  preCommit(checkpointId: number): string | null {
    if (this.failure) throw this.failure;
    this.flushBatch();
    if (!this.s.exactlyOnce || this.epochRows === 0) return null;
    const gid = formatGid(this.s.sinkId, this.subtask, checkpointId, this.runId);
    const record = recordStatement(this.s.target.schema);
    this.enqueue('recording the epoch', (c) => c.query(record, [this.s.sinkId, gid, this.subtask, checkpointId]));
    this.enqueue(`preparing transaction ${gid}`, (c) => c.query(`PREPARE TRANSACTION ${gidLiteral(gid)}`));
    this.inTransaction = false;
    this.epochRows = 0;
    return gid;
  }

  async whenPreCommitted(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure;
  }

  async commit(gids: readonly string[]): Promise<void> {
    let newest = 0;
    for (const gid of gids) {
      const committedNow = await this.finishPrepared('COMMIT', gid).catch((err: unknown) => Promise.reject(this.failed(`committing ${gid}`, err)));
      if (!committedNow && !(await isRecorded(this.control!, this.s.target.schema, gid))) {
        throw connectorError(
          this.s.connection,
          `committing ${gid}`,
          new Error('the prepared transaction is gone and was never committed (rolled back outside this job?): its rows are lost'),
        );
      }
      newest = Math.max(newest, parseGid(gid, this.s.sinkId)?.checkpointId ?? 0);
    }
    if (newest > 0) await pruneBookkeeping(this.control!, this.s.target.schema, this.s.sinkId, newest);
    if (this.subtask === 0 && gids.length > 0) await this.rollBackOtherRuns();
  }

  /**
   * Rolls back this sink's prepared transactions of other runs that the restored checkpoint does
   * not name (those the operator commits, each by one subtask, maybe later than this one). At open
   * that cleans up after dead runs; on a commit it also catches a PREPARE a dying attempt had
   * already sent, which the server may finish after the new attempt looked.
   */
  private async rollBackOtherRuns(): Promise<void> {
    try {
      const prepared = await preparedWithPrefix(this.control!, gidPrefix(this.s.sinkId));
      for (const gid of lingeringGids(prepared, this.s.sinkId, this.runId, this.restored)) await this.finishPrepared('ROLLBACK', gid);
    } catch (err) {
      throw this.failed('rolling back prepared transactions of other runs', err);
    }
  }

  /**
   * COMMIT or ROLLBACK PREPARED; false when the gid does not exist (finished before). A gid that
   * another session still holds (a dead run's PREPARE the server is finishing) is waited for, with
   * backoff on the server (no timer here), up to `BUSY_WAIT.totalMs`.
   */
  private async finishPrepared(verb: 'COMMIT' | 'ROLLBACK', gid: string): Promise<boolean> {
    let waitedMs = 0;
    for (let waitMs = BUSY_WAIT.firstMs; ; waitMs = Math.min(waitMs * 2, BUSY_WAIT.longestMs)) {
      try {
        await this.control!.query(`${verb} PREPARED ${gidLiteral(gid)}`);
        return true;
      } catch (err) {
        if (sqlState(err) === UNDEFINED_OBJECT) return false;
        if (!isBusy(err) || waitedMs >= BUSY_WAIT.totalMs) throw waitedMs === 0 ? err : stillBusy(err, waitedMs);
      }
      await this.control!.query('SELECT pg_sleep($1)', [waitMs / 1000]);
      waitedMs += waitMs;
    }
  }

  /** Sends the buffered rows; in exactly-once mode inside the epoch's transaction, begun with its first batch. */
  private flushBatch(): void {
    if (this.batch.length === 0) return;
    let rows: Array<readonly unknown[]> = this.batch;
    let deletes: Array<readonly unknown[]> = [];
    if (this.s.deleteWhen !== null)
      ({ upserts: rows, deletes } = lastActionPerKey(
        this.batch.map((row, i) => ({ row, remove: this.removals[i]! })),
        this.keyIndexes,
      ));
    else if (this.keyIndexes.length > 0) rows = lastPerKey(this.batch, this.keyIndexes);
    this.batch = [];
    this.removals = [];
    if (this.s.exactlyOnce && !this.inTransaction) {
      this.inTransaction = true;
      this.enqueue('beginning a transaction', (c) => c.query('BEGIN'));
    }
    this.epochRows += rows.length + deletes.length;
    if (rows.length > 0) {
      const text = insertStatement(this.s.target, rows.length);
      // A named statement is parsed once per connection: full batches all share one.
      const name = rows.length === this.s.batchRows ? `weir_insert_${rows.length}` : undefined;
      this.enqueue(`inserting ${rows.length} rows`, (c) => c.query({ name, text, values: rows.flat() }));
    }
    if (deletes.length > 0) {
      const text = deleteStatement(this.s.target, deletes.length);
      this.enqueue(`deleting ${deletes.length} rows`, (c) => c.query({ text, values: deletes.flat() }));
    }
  }

  private enqueue(what: string, run: (client: pg.Client) => Promise<unknown>): void {
    const client = this.data!;
    this.tail = this.tail.then(async () => {
      if (this.failure) return;
      try {
        await run(client);
      } catch (err) {
        this.failure ??= this.failed(what, err);
      }
    });
  }

  private failed(what: string, err: unknown): ConnectorError {
    return connectorError(this.s.connection, `sink ${this.s.sinkId}, subtask ${this.subtask}: ${what}`, err);
  }

  /** Closing the data connection aborts its open transaction; prepared ones stay for recovery. */
  dispose(): void {
    this.batch = [];
    this.removals = [];
    for (const client of [this.data, this.control]) client?.end().catch(() => {});
    this.data = null;
    this.control = null;
  }

  /** After the final checkpoint committed: the connections end once queued statements ran. */
  close(): void {
    const clients = [this.data, this.control];
    this.data = null;
    this.control = null;
    void this.tail.then(() => {
      for (const client of clients) client?.end().catch(() => {});
    });
  }
}
