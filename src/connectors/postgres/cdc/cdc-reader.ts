/**
 * The CDC source's reader (see cdc-source.ts for the contract). Changes arrive asynchronously (the
 * snapshot copy, then the replication stream) into a bounded queue; `poll` drains it and moves the
 * position, so the position always describes exactly what went downstream before a barrier.
 */
import type pg from 'pg';
import { type Pgoutput, PgoutputPlugin } from 'pg-logical-replication';
import { ConnectorError, RestoreError } from '../../../core/errors.ts';
import type { Clock } from '../../../core/time.ts';
import type { Collector, RuntimeContext } from '../../../runtime/functions.ts';
import { POLL_END, POLL_MORE, type PollStatus } from '../../../runtime/operator.ts';
import type { SourceReader } from '../../../runtime/source.ts';
import { ListStateDescriptor } from '../../../state/descriptors.ts';
import type { ListState } from '../../../state/state.ts';
import { connect } from '../connection.ts';
import { connectorError } from '../settings.ts';
import {
  type CdcPosition,
  type CdcStateV1,
  ConfirmLedger,
  ReplayFilter,
  decodePosition,
  encodePosition,
  initialPosition,
  slotBehindCheck,
} from './cdc-position.ts';
import type { CdcSettings } from './cdc-settings.ts';
import type { ChangeRecord, ChangeRow } from './change-record.ts';
import { formatLsn, parseLsn } from './lsn.ts';
import { ReplicationConnection } from './replication-connection.ts';
import { type CapturedTable, type SlotInfo, dropSlot, ensurePublication, missingTables, slotInfo } from './slot-admin.ts';
import { copyTables, importSnapshot, tableKeyOf } from './snapshot-copy.ts';
import { type CopyQuery, type KeyValues, type TableKey, copyQueries, inCopy } from './snapshot-keys.ts';
import { ChangeQueue } from './change-queue.ts';
import { slotNameOf } from './cdc-names.ts';

/** Union state: every subtask sees it, subtask 0 (the one reading the slot) owns it. */
const POSITION = new ListStateDescriptor<CdcStateV1>('postgres-cdc-position');

/** Queue entries besides changes: transaction bounds and the end of the snapshot move the position. */
type Mark =
  | { readonly kind: 'begin'; readonly lsn: bigint; readonly emitted: number }
  | { readonly kind: 'commit'; readonly lsn: bigint; readonly endLsn: bigint }
  | { readonly kind: 'snapshot-end' };
type Entry = ChangeRecord | Mark;

/** Waits of 50 ms for a slot to become inactive (10 s). */
const SLOT_RELEASE_WAITS = 200;

export class PostgresCdcReader implements SourceReader<ChangeRecord> {
  private state!: ListState<CdcStateV1>;
  private position: CdcPosition | null = null;
  private control: pg.Client | null = null;
  private snapshotClient: pg.Client | null = null;
  private replication: ReplicationConnection | null = null;
  private failure: ConnectorError | RestoreError | null = null;
  /** A subtask other than 0: it reads nothing. */
  private idle = false;
  private closed = false;
  private readonly queue: ChangeQueue<Entry>;
  private readonly ledger = new ConfirmLedger();
  private confirmed = 0n;
  /** Only its parser is used (relation cache, type parsers); the stream is ours (replication-connection.ts). */
  private readonly parser = new PgoutputPlugin({ protoVersion: 1, publicationNames: [] });
  /** The transaction being received: its commit LSN as text and time. */
  private txLsn = 0n;
  private txLsnText = '';
  private txTimeMs = 0;
  private filter: ReplayFilter | null = null;
  private name = '';
  /** Primary keys of the captured tables (null: order not reproducible), and table indexes by `schema.table`. */
  private keys: Array<TableKey | null> = [];
  private readonly tableIndex = new Map<string, number>();
  /** The last snapshot row emitted: its key goes into the checkpoint. */
  private lastSnapshot: ChangeRecord | null = null;
  /** Changes committed at or before it may be in a resumed copy (see snapshot-keys.ts). */
  private boundaryLsnMax = 0n;
  private clock: Clock | null = null;

  constructor(private readonly s: CdcSettings) {
    this.queue = new ChangeQueue<Entry>(
      s.bufferChanges,
      () => this.replication?.pause(),
      () => this.replication?.resume(),
    );
  }

  async open(ctx: RuntimeContext): Promise<void> {
    this.state = ctx.getUnionListState(POSITION);
    this.name = `postgres-cdc ${this.s.id ?? ctx.uid}`;
    this.clock = ctx.clock;
    // One slot is one ordered stream: subtask 0 reads it, others have nothing to read.
    if (ctx.subtaskIndex !== 0) {
      this.idle = true;
      return;
    }
    const onError = (err: ConnectorError): void => this.fail(err);
    this.control = await connect(this.s.connection, `${this.name} control`, onError);
    for (const [i, t] of this.s.tables.entries()) this.tableIndex.set(`${t.schema}.${t.table}`, i);
    const restored = ctx.restored ? this.state.get()[0] : undefined;
    const position = restored === undefined ? null : decodePosition(restored, this.name);
    // The rest runs after open: creating a slot waits for every transaction running on the server,
    // prepared ones too, and those of this job's sink are only resolved once its subtasks opened.
    const setup = position === null ? this.startFresh(ctx) : this.resume(position, ctx);
    setup.catch((err: unknown) => {
      if (err instanceof ConnectorError || err instanceof RestoreError) this.failure ??= err;
      else this.fail(connectorError(this.s.connection, this.name, err));
    });
  }

  /** No checkpoint: (re)create the publication and the slot, then copy the snapshot and stream. */
  private async startFresh(ctx: RuntimeContext): Promise<void> {
    const control = this.control!;
    const missing = await missingTables(control, this.s.tables);
    if (missing.length > 0) throw connectorError(this.s.connection, this.name, new Error(`captured table(s) ${missing.join(', ')} do not exist`));
    this.keys = await this.tableKeys();
    const slot = slotNameOf(this.s.id ?? ctx.uid);
    await ensurePublication(control, slot, this.s.tables);
    const existing = await this.inactiveSlot(slot);
    // A slot of this source with no checkpoint behind it belongs to a run that never completed one.
    if (existing !== null) await dropSlot(control, slot);
    const replication = await this.openReplication();
    const { consistentLsn, snapshotName } = await replication.createSlot(slot);
    this.position = initialPosition(slot, slot, consistentLsn, this.s.snapshot);
    if (!this.s.snapshot) {
      this.startStream(new ReplayFilter(this.position));
      return;
    }
    this.snapshotClient = await connect(this.s.connection, `${this.name} snapshot`, (err) => this.fail(err));
    await importSnapshot(this.snapshotClient, snapshotName);
    void this.copySnapshot(this.position, copyQueries(this.s.tables, this.keys, 0, null));
  }

  private async tableKeys(): Promise<Array<TableKey | null>> {
    const keys: Array<TableKey | null> = [];
    for (const t of this.s.tables) keys.push(await tableKeyOf(this.control!, t));
    return keys;
  }

  /**
   * A checkpoint inside the copy: the rows after its last key (and the later tables) are read
   * from a new snapshot, taken with a temporary slot, and changes of those rows the stream
   * replays up to that snapshot's LSN are skipped.
   */
  private async resumeCopy(p: CdcPosition): Promise<void> {
    if (p.snapshotKey === null) {
      throw new RestoreError(
        `${this.name}: the checkpoint was taken during the initial snapshot (after ${p.snapshotRows} rows) of a table without a primary key of integer, text or uuid columns, so the copy cannot continue: drop slot ${p.slot} and start the job without restoring`,
      );
    }
    const temp = await ReplicationConnection.open(this.s.connection, `${this.name} resume`, this.clock!, (err) => this.fail(err));
    try {
      const { consistentLsn, snapshotName } = await temp.createSlot(`${p.slot.slice(0, 55)}_resume`, true);
      this.snapshotClient = await connect(this.s.connection, `${this.name} snapshot`, (err) => this.fail(err));
      await importSnapshot(this.snapshotClient, snapshotName);
      p.boundaries.push({ table: p.snapshotTable, key: p.snapshotKey, lsn: consistentLsn });
    } finally {
      temp.close();
    }
    this.noteBoundaries(p);
    await this.openReplication();
    void this.copySnapshot(p, copyQueries(this.s.tables, this.keys, p.snapshotTable, p.snapshotKey));
  }

  private noteBoundaries(p: CdcPosition): void {
    for (const b of p.boundaries) if (b.lsn > this.boundaryLsnMax) this.boundaryLsnMax = b.lsn;
  }

  /** From a checkpoint: the slot must still be there and must not have confirmed past the checkpoint. */
  private async resume(position: CdcPosition, ctx: RuntimeContext): Promise<void> {
    this.position = position;
    this.confirmed = position.confirmLsn;
    if (position.phase === 'ended') return;
    if (position.phase === 'snapshot' && position.snapshotRows === 0) {
      // nothing went downstream yet: the same as no checkpoint
      await this.startFresh(ctx);
      return;
    }
    this.keys = await this.tableKeys();
    this.noteBoundaries(position);
    const info = await this.inactiveSlot(position.slot);
    if (info === null) {
      throw connectorError(
        this.s.connection,
        this.name,
        new Error(`replication slot ${position.slot} does not exist (dropped?): the changes after ${formatLsn(position.confirmLsn)} are lost`),
      );
    }
    const behind = slotBehindCheck(position, info.confirmedLsn ?? 0n);
    if (behind !== null) throw new RestoreError(`${this.name}: ${behind}`);
    if (position.phase === 'snapshot') {
      await this.resumeCopy(position);
      return;
    }
    await this.openReplication();
    this.startStream(new ReplayFilter(position));
  }

  /**
   * The slot, once no connection streams it: the connection of a failed attempt of this job may
   * still be closing, so a slot that stays active for `SLOT_RELEASE_WAITS` short waits (on the
   * server, no timer here) is taken to belong to another job.
   */
  private async inactiveSlot(slot: string): Promise<SlotInfo | null> {
    for (let i = 0; ; i++) {
      const info = await slotInfo(this.control!, slot);
      if (info === null || !info.active) return info;
      if (i >= SLOT_RELEASE_WAITS) throw this.slotInUse(slot);
      await this.control!.query('SELECT pg_sleep(0.05)');
    }
  }

  private slotInUse(slot: string): ConnectorError {
    return connectorError(
      this.s.connection,
      this.name,
      new Error(`replication slot ${slot} is in use by another connection (another job with the same source id?)`),
    );
  }

  private async openReplication(): Promise<ReplicationConnection> {
    this.replication = await ReplicationConnection.open(this.s.connection, `${this.name} replication`, this.clock!, (err) => this.fail(err));
    return this.replication;
  }

  private startStream(filter: ReplayFilter): void {
    const p = this.position!;
    this.filter = filter;
    this.replication!.start(p.slot, p.publication, p.confirmLsn, { onMessage: (payload) => this.onMessage(payload) });
  }

  private async copySnapshot(p: CdcPosition, queries: readonly CopyQuery[]): Promise<void> {
    const lsnText = formatLsn(p.consistentLsn);
    try {
      await copyTables(this.snapshotClient!, queries, this.s.snapshotBatchRows, (t: CapturedTable, rows, last) => {
        for (const row of rows) {
          this.push({ kind: 'insert', schema: t.schema, table: t.table, lsn: lsnText, commitTimeMs: null, snapshot: true, before: null, after: row });
        }
        // In the same turn as the last rows, so a poll that emits them also leaves the snapshot phase.
        if (last) this.push({ kind: 'snapshot-end' });
        return this.closed ? undefined : this.queue.space();
      });
      if (this.closed) return;
      await this.snapshotClient!.end();
      this.snapshotClient = null;
      this.startStream(new ReplayFilter(p));
    } catch (err) {
      this.fail(connectorError(this.s.connection, `${this.name}: copying the initial snapshot`, err));
    }
  }

  /** One pgoutput message from the stream, in stream order. */
  private onMessage(payload: Buffer): void {
    const msg = this.parser.parse(payload) as Pgoutput.Message;
    const filter = this.filter!;
    switch (msg.tag) {
      case 'begin': {
        this.txLsn = parseLsn(msg.commitLsn!);
        this.txLsnText = formatLsn(this.txLsn);
        this.txTimeMs = Number((msg.commitTime as bigint) / 1000n);
        filter.begin(this.txLsn);
        if (!filter.skippingTransaction) this.push({ kind: 'begin', lsn: this.txLsn, emitted: filter.skippedInTransaction });
        return;
      }
      case 'commit':
        if (!filter.skippingTransaction) this.push({ kind: 'commit', lsn: this.txLsn, endLsn: parseLsn(msg.commitEndLsn!) });
        return;
      case 'insert':
        this.offer(this.change('insert', msg.relation, null, msg.new), filter);
        return;
      case 'update':
        this.offer(this.change('update', msg.relation, msg.old ?? msg.key, msg.new), filter);
        return;
      case 'delete':
        this.offer(this.change('delete', msg.relation, msg.old ?? msg.key, null), filter);
        return;
      default:
        return; // relation and type messages feed the parser; truncate, origin and logical messages are not captured
    }
  }

  /** Queues a streamed change unless a resumed copy holds it or the restored position emitted it (in that order: positions count queued changes). */
  private offer(change: ChangeRecord, filter: ReplayFilter): void {
    if (this.txLsn <= this.boundaryLsnMax && this.copied(change)) return;
    if (filter.keep()) this.push(change);
  }

  private copied(c: ChangeRecord): boolean {
    const table = this.tableIndex.get(`${c.schema}.${c.table}`);
    const key = table === undefined ? undefined : this.keys[table];
    if (table === undefined || key == null) return false;
    const row = c.before ?? c.after!;
    return inCopy(this.position!.boundaries, this.keys, table, this.keyOf(key, row), this.txLsn);
  }

  private keyOf(key: TableKey, row: ChangeRow): KeyValues {
    return key.columns.map((col) => row[col]);
  }

  private change(kind: ChangeRecord['kind'], relation: Pgoutput.MessageRelation, before: ChangeRow | null, after: ChangeRow | null): ChangeRecord {
    return {
      kind,
      schema: relation.schema,
      table: relation.name,
      lsn: this.txLsnText,
      commitTimeMs: this.txTimeMs,
      snapshot: false,
      before,
      after,
    } as ChangeRecord;
  }

  private push(entry: Entry): void {
    if (!this.closed) this.queue.push(entry);
  }

  poll(out: Collector<ChangeRecord>, maxRecords: number): PollStatus {
    if (this.failure) throw this.failure;
    const p = this.position;
    if (this.idle || p?.phase === 'ended') return POLL_END;
    if (p === null) return { status: 'wait', delayMs: this.s.idleWaitMs };
    let emitted = 0;
    const queue = this.queue;
    for (let e = queue.peek(); e !== undefined; e = queue.peek()) {
      // marks right after the last change emitted are taken too: the position then ends on a boundary
      if (emitted >= maxRecords && e.kind !== 'begin' && e.kind !== 'commit' && e.kind !== 'snapshot-end') break;
      queue.drop();
      switch (e.kind) {
        case 'begin':
          p.partialLsn = e.lsn;
          p.partialCount = e.emitted;
          break;
        case 'commit':
          p.commitLsn = e.lsn;
          p.confirmLsn = e.endLsn;
          p.partialLsn = 0n;
          p.partialCount = 0;
          break;
        case 'snapshot-end':
          p.phase = 'stream';
          break;
        default:
          out.collect(e);
          emitted++;
          if (p.phase === 'snapshot') {
            p.snapshotRows++;
            this.lastSnapshot = e;
          } else p.partialCount++;
          if (this.s.endWhen?.(e)) {
            p.phase = 'ended';
            return POLL_END;
          }
      }
    }
    queue.settle();
    return emitted > 0 ? POLL_MORE : { status: 'wait', delayMs: this.s.idleWaitMs };
  }

  snapshotState(checkpointId: number): void {
    const p = this.position;
    if (p === null) {
      this.state.update([]);
      return;
    }
    const last = this.lastSnapshot;
    if (p.phase === 'snapshot' && last !== null) {
      const table = this.tableIndex.get(`${last.schema}.${last.table}`)!;
      const key = this.keys[table];
      p.snapshotTable = table;
      p.snapshotKey = key == null ? null : this.keyOf(key, last.after!);
    }
    this.state.update([encodePosition(p)]);
    this.ledger.record(checkpointId, p.confirmLsn);
  }

  /** The slot confirms the position of the completed checkpoint (and the server may recycle WAL before it). */
  notifyCheckpointComplete(checkpointId: number): Promise<void> | void {
    const lsn = this.ledger.complete(checkpointId);
    if (lsn === null || lsn <= this.confirmed || this.replication === null) return;
    this.confirmed = lsn;
    return this.replication.confirm(lsn);
  }

  notifyCheckpointAborted(checkpointId: number): void {
    this.ledger.abort(checkpointId);
  }

  private fail(err: ConnectorError): void {
    if (this.closed) return;
    this.failure ??= err;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.clear();
    this.replication?.close();
    for (const c of [this.control, this.snapshotClient]) c?.end().catch(() => {});
    this.replication = null;
    this.control = null;
    this.snapshotClient = null;
  }
}
