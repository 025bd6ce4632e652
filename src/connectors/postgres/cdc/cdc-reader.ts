/**
 * The CDC source's split reader (see cdc-source.ts for the contract). It sets up or resumes the
 * slot, then changes arrive asynchronously (the snapshot copy, then the replication stream) into a
 * bounded queue; `fetch` cuts the queue into batches with the position after each change
 * (change-batches.ts), and `SplitSourceReader` emits them and snapshots the position of the last
 * change emitted, so a checkpoint's position describes exactly what went downstream before its
 * barrier. The slot confirms a checkpoint's position when the checkpoint completes.
 */
import type pg from 'pg';
import { type Pgoutput, PgoutputPlugin } from 'pg-logical-replication';
import { assert } from '../../../core/assert.ts';
import { ConnectorError, RestoreError, SourceRewindError } from '../../../core/errors.ts';
import type { RuntimeContext } from '../../../runtime/functions.ts';
import type { SourceSplit, SplitAssignment, SplitBatch, SplitReader } from '../../../runtime/split-source.ts';
import { connect } from '../connection.ts';
import { connectorError } from '../settings.ts';
import type { CapturedTable } from './captured-table.ts';
import { slotNameOf } from './cdc-names.ts';
import {
  boundariesOf,
  type CdcCopyPosition,
  type CdcPosition,
  type CdcSlot,
  type CdcStreamPosition,
  checkPosition,
  confirmLsnOf,
  copyPosition,
  ReplayFilter,
  resumePointOf,
  cannotRewindWayOut,
  slotBehindCheck,
  slotOf,
  streamStart,
  withBoundary,
} from './cdc-position.ts';
import { convertPositionV1, POSITION_V1 } from './cdc-position-v1.ts';
import type { CdcSettings } from './cdc-settings.ts';
import { ChangeBatcher, type Entry, keyOf, SLOT_SPLIT_ID } from './change-batches.ts';
import { ChangeQueue } from './change-queue.ts';
import type { ChangeRecord, ChangeRow } from './change-record.ts';
import { formatLsn, parseLsn } from './lsn.ts';
import { ReplicationConnection } from './replication-connection.ts';
import { dropSlot, ensurePublication, missingTables, type SlotInfo, slotInfo } from './slot-admin.ts';
import { copyTables, importSnapshot, tableKeyOf } from './snapshot-copy.ts';
import { type CopyQuery, copyQueries, inCopy, type SnapshotBoundary, type TableKey } from './snapshot-keys.ts';

/** The source's only split: the replication slot, read by subtask 0. */
export interface CdcSplit extends SourceSplit {
  readonly id: typeof SLOT_SPLIT_ID;
  readonly ordinal: 0;
}

/** Waits of 50 ms for a slot to become inactive (10 s). */
const SLOT_RELEASE_WAITS = 200;
const NOTHING_EMITTED = { commitLsn: 0n, partialLsn: 0n, partialCount: 0 } as const;

/** Reads the slot for subtask 0; one per attempt. */
export class PostgresCdcSplitReader implements SplitReader<ChangeRecord, CdcSplit, CdcPosition> {
  private control: pg.Client | null = null;
  private snapshotClient: pg.Client | null = null;
  private replication: ReplicationConnection | null = null;
  private failure: ConnectorError | RestoreError | SourceRewindError | null = null;
  private closed = false;
  private readonly queue: ChangeQueue<Entry>;
  private batcher: ChangeBatcher | null = null;
  /** The restored position (format 1) said the end condition had held: the first fetch ends the split. */
  private endedAtRestore = false;
  /** The LSN the slot confirmed (or was created at): confirmations only move forward. */
  private confirmed = 0n;
  /** Only its parser is used (relation cache, type parsers); the stream is ours (replication-connection.ts). */
  private readonly parser = new PgoutputPlugin({ protoVersion: 1, publicationNames: [] });
  /** The transaction being received: its commit LSN as number and text, and time. */
  private txLsn = 0n;
  private txLsnText = '';
  private txTimeMs = 0;
  private filter: ReplayFilter | null = null;
  private readonly name: string;
  /** Primary keys of the captured tables (null: order not reproducible), and table indexes by `schema.table`. */
  private keys: Array<TableKey | null> = [];
  private readonly tableIndex = new Map<string, number>();
  /** Where resumed copies read the rest from later snapshots; changes committed up to the newest may be in the copy. */
  private boundaries: SnapshotBoundary[] = [];
  private boundaryLsnMax = 0n;
  /** The stream has not yet replayed every transaction committed up to `boundaryLsnMax` (the batcher defers an end until it has). */
  private catchingUp = false;

  constructor(
    private readonly s: CdcSettings,
    private readonly ctx: RuntimeContext,
    queueChanges: number,
  ) {
    this.name = `postgres-cdc ${s.id ?? ctx.uid}`;
    this.queue = new ChangeQueue<Entry>(
      queueChanges,
      () => this.replication?.pause(),
      () => this.replication?.resume(),
    );
  }

  /**
   * Connects and starts the setup, which runs after `open`: creating a slot waits for every
   * transaction running on the server, prepared ones too, and those of this job's sink are only
   * resolved once its subtasks opened. Pins the position of a checkpoint written in format 1.
   */
  async open(splits: readonly SplitAssignment<CdcSplit, CdcPosition>[]): Promise<ReadonlyMap<string, CdcPosition> | undefined> {
    assert(splits.length === 1 && splits[0]!.split.id === SLOT_SPLIT_ID, () => `${this.name}: assigned splits ${splits.map((s) => s.split.id).join(', ')}`);
    this.control = await connect(this.s.connection, `${this.name} control`, (err) => this.fail(err));
    for (const [i, t] of this.s.tables.entries()) this.tableIndex.set(`${t.schema}.${t.table}`, i);
    let position = checkPosition(splits[0]!.position, this.name);
    let pinned: ReadonlyMap<string, CdcPosition> | undefined;
    if (position.phase === 'start' && this.ctx.restored) {
      // a checkpoint of the source before it read splits: its position is in the old operator state
      const legacy = this.ctx.getUnionListState(POSITION_V1);
      const old = legacy.get();
      if (old.length > 0) {
        const converted = convertPositionV1(old[0], this.name);
        legacy.clear();
        position = converted.position;
        this.endedAtRestore = converted.ended;
        pinned = new Map([[SLOT_SPLIT_ID, position]]);
      }
    }
    this.batcher = new ChangeBatcher(position, this.s.endWhen);
    if (this.batcher.ended) this.endedAtRestore = true;
    if (this.endedAtRestore) return pinned;
    const setup = position.phase === 'start' ? this.startFresh() : this.resume(position);
    setup.catch((err: unknown) => {
      if (err instanceof ConnectorError || err instanceof RestoreError || err instanceof SourceRewindError) this.fail(err);
      else this.fail(connectorError(this.s.connection, this.name, err));
    });
    return pinned;
  }

  /** No position to continue from: (re)create the publication and the slot, then copy the snapshot and stream. */
  private async startFresh(): Promise<void> {
    const control = this.control!;
    const missing = await missingTables(control, this.s.tables);
    if (missing.length > 0) throw connectorError(this.s.connection, this.name, new Error(`captured table(s) ${missing.join(', ')} do not exist`));
    this.keys = await this.tableKeys();
    const name = slotNameOf(this.s.id ?? this.ctx.uid);
    await ensurePublication(control, name, this.s.tables);
    const existing = await this.inactiveSlot(name);
    // A slot of this source with no checkpoint behind it belongs to a run that never completed one.
    if (existing !== null) await dropSlot(control, name);
    const replication = await this.openReplication();
    const { consistentLsn, snapshotName } = await replication.createSlot(name);
    const slot = slotOf(name, name, formatLsn(consistentLsn), []);
    this.confirmed = consistentLsn;
    this.boundaries = [];
    if (!this.s.snapshot) {
      this.push({ kind: 'position', position: streamStart(slot) });
      this.startStream(slot, consistentLsn, new ReplayFilter(NOTHING_EMITTED));
      return;
    }
    this.push({ kind: 'position', position: copyPosition(slot, 0, 0, null) });
    this.snapshotClient = await connect(this.s.connection, `${this.name} snapshot`, (err) => this.fail(err));
    await importSnapshot(this.snapshotClient, snapshotName);
    void this.copySnapshot(slot, copyQueries(this.s.tables, this.keys, 0, null));
  }

  private async tableKeys(): Promise<Array<TableKey | null>> {
    const keys: Array<TableKey | null> = [];
    for (const t of this.s.tables) keys.push(await tableKeyOf(this.control!, t));
    return keys;
  }

  /** From a checkpoint: the slot must still be there and must not have confirmed past the checkpoint. */
  private async resume(p: CdcCopyPosition | CdcStreamPosition): Promise<void> {
    // nothing went downstream yet: the same as no checkpoint
    if (p.phase === 'copy' && p.rows === 0) return this.startFresh();
    const confirm = confirmLsnOf(p)!;
    this.confirmed = confirm;
    this.keys = await this.tableKeys();
    this.boundaries = boundariesOf(p.slot);
    this.noteBoundaries();
    const info = await this.inactiveSlot(p.slot.slot);
    if (info === null) {
      throw connectorError(
        this.s.connection,
        this.name,
        new Error(`replication slot ${p.slot.slot} does not exist (dropped?): the changes after ${formatLsn(confirm)} are lost`),
      );
    }
    const behind = slotBehindCheck(p.slot.slot, confirm, info.confirmedLsn ?? 0n);
    if (behind !== null) throw new SourceRewindError(`${this.name}: ${behind}. ${cannotRewindWayOut(p.slot.slot)}`);
    if (p.phase === 'copy') return this.resumeCopy(p);
    await this.openReplication();
    this.startStream(p.slot, confirm, new ReplayFilter(resumePointOf(p)));
  }

  /**
   * A checkpoint inside the copy: the rows after its last key (and the later tables) are read
   * from a new snapshot, taken with a temporary slot, and changes of those rows the stream
   * replays up to that snapshot's LSN are skipped.
   */
  private async resumeCopy(p: CdcCopyPosition): Promise<void> {
    if (p.key === null) {
      throw new RestoreError(
        `${this.name}: the checkpoint was taken during the initial snapshot (after ${p.rows} rows) of a table without a primary key of integer, text or uuid columns, so the copy cannot continue: drop slot ${p.slot.slot} and start the job without restoring`,
      );
    }
    const temp = await ReplicationConnection.open(this.s.connection, `${this.name} resume`, this.ctx.clock, (err) => this.fail(err));
    let slot: CdcSlot;
    try {
      const { consistentLsn, snapshotName } = await temp.createSlot(`${p.slot.slot.slice(0, 55)}_resume`, true);
      this.snapshotClient = await connect(this.s.connection, `${this.name} snapshot`, (err) => this.fail(err));
      await importSnapshot(this.snapshotClient, snapshotName);
      slot = withBoundary(p.slot, p.table, p.key, consistentLsn);
      this.boundaries.push({ table: p.table, key: p.key, lsn: consistentLsn });
    } finally {
      temp.close();
    }
    this.noteBoundaries();
    this.push({ kind: 'position', position: copyPosition(slot, p.rows, p.table, p.key, p.endPending) });
    await this.openReplication();
    void this.copySnapshot(slot, copyQueries(this.s.tables, this.keys, p.table, p.key));
  }

  private noteBoundaries(): void {
    for (const b of this.boundaries) if (b.lsn > this.boundaryLsnMax) this.boundaryLsnMax = b.lsn;
    this.catchingUp = this.boundaries.length > 0;
  }

  /** In stream order: every transaction committed up to the newest boundary was received. */
  private caughtUp(): void {
    this.catchingUp = false;
    this.push({ kind: 'caught-up' });
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
    this.replication = await ReplicationConnection.open(this.s.connection, `${this.name} replication`, this.ctx.clock, (err) => this.fail(err));
    return this.replication;
  }

  private startStream(slot: CdcSlot, fromLsn: bigint, filter: ReplayFilter): void {
    this.filter = filter;
    this.replication!.start(slot.slot, slot.publication, fromLsn, {
      onMessage: (payload) => this.onMessage(payload),
      onKeepalive: (walEnd) => {
        if (this.catchingUp && walEnd >= this.boundaryLsnMax) this.caughtUp();
        return this.catchingUp;
      },
    });
  }

  private async copySnapshot(slot: CdcSlot, queries: readonly CopyQuery[]): Promise<void> {
    const lsnText = slot.consistentLsn;
    try {
      await copyTables(this.snapshotClient!, queries, this.s.snapshotBatchRows, (t: CapturedTable, rows, last) => {
        if (rows.length > 0) {
          const table = this.tableIndex.get(`${t.schema}.${t.table}`)!;
          this.push({ kind: 'table', table, key: this.keys[table] ?? null });
        }
        for (const row of rows) {
          this.push({ kind: 'insert', schema: t.schema, table: t.table, lsn: lsnText, commitTimeMs: null, snapshot: true, before: null, after: row });
        }
        if (last) this.push({ kind: 'snapshot-end' });
        return this.closed ? undefined : this.queue.space();
      });
      if (this.closed) return;
      await this.snapshotClient!.end();
      this.snapshotClient = null;
      this.startStream(slot, parseLsn(slot.consistentLsn), new ReplayFilter(NOTHING_EMITTED));
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
        if (this.catchingUp && this.txLsn > this.boundaryLsnMax) this.caughtUp();
        this.txLsnText = formatLsn(this.txLsn);
        this.txTimeMs = Number((msg.commitTime as bigint) / 1000n);
        filter.begin(this.txLsn);
        if (!filter.skippingTransaction) this.push({ kind: 'begin', lsn: this.txLsnText, emitted: filter.skippedInTransaction });
        return;
      }
      case 'commit':
        if (!filter.skippingTransaction) this.push({ kind: 'commit', lsn: this.txLsnText, endLsn: formatLsn(parseLsn(msg.commitEndLsn!)) });
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
    return inCopy(this.boundaries, this.keys, table, keyOf(key, row), this.txLsn);
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

  /** The changes queued since the last fetch with their positions; waits while there are none. */
  async fetch(): Promise<SplitBatch<ChangeRecord, CdcPosition> | null> {
    const batcher = this.batcher!;
    for (;;) {
      if (this.failure !== null) throw this.failure;
      if (this.closed) return { splitId: SLOT_SPLIT_ID, records: [], positions: [] };
      if (this.endedAtRestore) {
        this.endedAtRestore = false;
        return { splitId: SLOT_SPLIT_ID, records: [], positions: [], splitEnded: true };
      }
      if (batcher.ended) return null;
      const batch = batcher.take(this.queue, this.queue.capacity);
      this.queue.settle();
      if (batch !== null) return batch;
      await this.queue.nonEmpty();
    }
  }

  /** The slot confirms the position of the completed checkpoint (and the server may recycle WAL before it). */
  notifyCheckpointComplete(_checkpointId: number, positions: ReadonlyMap<string, CdcPosition>): Promise<void> | void {
    const position = positions.get(SLOT_SPLIT_ID);
    const lsn = position === undefined ? null : confirmLsnOf(position);
    if (lsn === null || lsn <= this.confirmed || this.replication === null) return;
    this.confirmed = lsn;
    return this.replication.confirm(lsn);
  }

  private fail(err: ConnectorError | RestoreError | SourceRewindError): void {
    if (this.closed) return;
    this.failure ??= err;
    this.queue.wake();
  }

  /** Closes the connections; the slot becomes inactive and keeps its confirmed position. */
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
