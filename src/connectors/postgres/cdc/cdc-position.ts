/**
 * The CDC source's position and the pure decisions around it: the position each record carries
 * (format version 3, the split position `SplitSourceReader` checkpoints; version 2 is read too),
 * which replayed changes a
 * restored reader skips, and which LSN the slot may confirm when a checkpoint completes. Nothing
 * here talks to a server.
 *
 * A position names transactions by their commit LSN, which pgoutput sends in increasing order. A
 * checkpoint can fall inside a transaction's changes, so the position holds the last transaction
 * emitted whole and how many changes of the next one were emitted; after a restore the server
 * resends from the slot's confirmed position (never past the checkpoint's) and the reader drops
 * what the position says was emitted. During the initial copy it holds the rows copied and the
 * key of the last one instead.
 *
 * After a restore inside the copy, the rest of the copy is read as of a later snapshot (a
 * boundary), so what the source emitted is consistent only once the stream has replayed every
 * transaction committed up to the newest boundary (they may change rows copied before the
 * restore). An end condition that holds before that point is deferred: the position carries
 * `endPending` (format 3), so a restore in between still ends once the stream caught up.
 *
 * Positions are immutable (frozen) and hold only strings, numbers and arrays, LSNs as text: one is
 * made per record, and the parts that change rarely (the slot, the transaction) are shared objects.
 */
import { RestoreError } from '../../../core/errors.ts';
import { formatLsn, parseLsn } from './lsn.ts';
import type { KeyValues, SnapshotBoundary } from './snapshot-keys.ts';

/** The zero LSN as text: no transaction. */
export const LSN_ZERO_TEXT = '0/0';

/** Rows of table index `table` with keys after `key` were read as of `lsn` (snapshot-keys.ts). */
export interface CdcBoundary {
  readonly table: number;
  readonly key: KeyValues | null;
  readonly lsn: string;
}

/** The slot a position reads, shared by the positions of one slot (and one resumed copy). */
export interface CdcSlot {
  readonly slot: string;
  readonly publication: string;
  /** The LSN the slot's snapshot is consistent with; snapshot rows carry it. */
  readonly consistentLsn: string;
  /** Where restores inside the copy read the rest from a later snapshot, in copy order. */
  readonly boundaries: readonly CdcBoundary[];
}

/** The transactions around a streamed position, shared by the positions of one transaction. */
export interface CdcTx {
  /** Commit LSN of the newest transaction whose changes were all emitted (0/0 when none). */
  readonly commitLsn: string;
  /** Its end: the slot may confirm up to here. The consistent LSN before any transaction. */
  readonly confirmLsn: string;
  /** Commit LSN of the transaction being emitted (0/0 between transactions). */
  readonly partialLsn: string;
}

/** The format version positions are written in. */
export const POSITION_VERSION = 3;

/** No slot yet (a fresh job before its setup): a restore starts afresh. */
export interface CdcStartPosition {
  readonly v: 3;
  readonly phase: 'start';
}

/** Inside the initial copy: `rows` copied, the last of table index `table` with primary key `key` (null: the table has no usable key). */
export interface CdcCopyPosition {
  readonly v: 3;
  readonly phase: 'copy';
  readonly slot: CdcSlot;
  readonly rows: number;
  readonly table: number;
  readonly key: KeyValues | null;
  /** The end condition held for an emitted change before the stream caught up with the newest boundary: the split ends once it has (`catchUpLsnOf`). */
  readonly endPending: boolean;
}

/** Streaming the slot: `partialCount` changes of transaction `tx.partialLsn` emitted after `tx.commitLsn`. */
export interface CdcStreamPosition {
  readonly v: 3;
  readonly phase: 'stream';
  readonly slot: CdcSlot;
  readonly tx: CdcTx;
  readonly partialCount: number;
  /** As in `CdcCopyPosition`. */
  readonly endPending: boolean;
}

/** The position of the source's single split (format version 3), after a record. */
export type CdcPosition = CdcStartPosition | CdcCopyPosition | CdcStreamPosition;

/** Where a fresh job starts. */
export const START_POSITION: CdcStartPosition = Object.freeze({ v: 3, phase: 'start' });

/** A slot, frozen with its boundaries. */
export function slotOf(slot: string, publication: string, consistentLsn: string, boundaries: readonly CdcBoundary[]): CdcSlot {
  const frozen = Object.freeze(boundaries.map((b) => Object.freeze({ table: b.table, key: freezeKey(b.key), lsn: b.lsn })));
  return Object.freeze({ slot, publication, consistentLsn, boundaries: frozen });
}

/** `slot` with one more boundary (a restore inside the copy read the rest from a snapshot at `lsn`). */
export function withBoundary(slot: CdcSlot, table: number, key: KeyValues, lsn: bigint): CdcSlot {
  return slotOf(slot.slot, slot.publication, slot.consistentLsn, [...slot.boundaries, { table, key, lsn: formatLsn(lsn) }]);
}

/** Transaction bounds, frozen. */
export function txOf(commitLsn: string, confirmLsn: string, partialLsn: string): CdcTx {
  return Object.freeze({ commitLsn, confirmLsn, partialLsn });
}

/** A position inside the copy (`key` must be frozen or fresh: it is frozen here). */
export function copyPosition(slot: CdcSlot, rows: number, table: number, key: KeyValues | null, endPending = false): CdcCopyPosition {
  return Object.freeze({ v: 3, phase: 'copy', slot, rows, table, key: freezeKey(key), endPending });
}

/** A position in the stream. */
export function streamPosition(slot: CdcSlot, tx: CdcTx, partialCount: number, endPending = false): CdcStreamPosition {
  return Object.freeze({ v: 3, phase: 'stream', slot, tx, partialCount, endPending });
}

/**
 * The commit LSN up to which the stream must replay before what the source emitted is consistent:
 * the newest boundary of a resumed copy (transactions committed up to it may change rows copied
 * before that restore); null when the copy was never resumed.
 */
export function catchUpLsnOf(slot: CdcSlot): bigint | null {
  let max: bigint | null = null;
  for (const b of slot.boundaries) {
    const lsn = parseLsn(b.lsn);
    if (max === null || lsn > max) max = lsn;
  }
  return max;
}

/** Whether the stream at `p` replayed every transaction up to the slot's newest boundary (it passed a commit at or after it). */
export function caughtUpAt(p: CdcPosition): boolean {
  if (p.phase === 'start') return true;
  const lsn = catchUpLsnOf(p.slot);
  return lsn === null || (p.phase === 'stream' && parseLsn(p.tx.commitLsn) >= lsn);
}

/** The stream's first position: right after the slot's consistent point (after the copy, or without one). */
export function streamStart(slot: CdcSlot): CdcStreamPosition {
  return streamPosition(slot, txOf(LSN_ZERO_TEXT, slot.consistentLsn, LSN_ZERO_TEXT), 0);
}

function freezeKey(key: KeyValues | null): KeyValues | null {
  return key === null || Object.isFrozen(key) ? key : Object.freeze(key.slice());
}

/** The LSN a checkpoint holding `p` lets the slot confirm; null before the slot exists. */
export function confirmLsnOf(p: CdcPosition): bigint | null {
  switch (p.phase) {
    case 'start':
      return null;
    case 'copy':
      return parseLsn(p.slot.consistentLsn);
    case 'stream':
      return parseLsn(p.tx.confirmLsn);
  }
}

/** The boundaries of `slot` with LSNs as numbers, for `inCopy`. */
export function boundariesOf(slot: CdcSlot): SnapshotBoundary[] {
  return slot.boundaries.map((b) => ({ table: b.table, key: b.key, lsn: parseLsn(b.lsn) }));
}

/** What a restored stream position says was emitted, LSNs as numbers (for `ReplayFilter`). */
export interface ResumePoint {
  readonly commitLsn: bigint;
  readonly confirmLsn: bigint;
  readonly partialLsn: bigint;
  readonly partialCount: number;
}

export function resumePointOf(p: CdcStreamPosition): ResumePoint {
  return { commitLsn: parseLsn(p.tx.commitLsn), confirmLsn: parseLsn(p.tx.confirmLsn), partialLsn: parseLsn(p.tx.partialLsn), partialCount: p.partialCount };
}

/**
 * A position read back from a checkpoint, checked and frozen again (the codec gives plain
 * objects): RestoreError naming the source when it is not format 2 or 3 or not well formed.
 * Format 2 is format 3 without `endPending` (false).
 */
export function checkPosition(value: unknown, source: string): CdcPosition {
  const bad = (why: string): RestoreError => new RestoreError(`${source}: the checkpointed position ${why}`);
  if (value === null || typeof value !== 'object') throw bad('is not an object');
  const p = value as {
    v?: unknown;
    phase?: unknown;
    slot?: Partial<CdcSlot> | null;
    rows?: unknown;
    table?: unknown;
    key?: unknown;
    tx?: Partial<CdcTx> | null;
    partialCount?: unknown;
    endPending?: unknown;
  };
  if (p.v !== 2 && p.v !== POSITION_VERSION)
    throw bad(`has format version ${String(p.v)}; this version of Weir reads versions 2 and 3 (and 1 from the operator state postgres-cdc-position)`);
  const endPending = p.v === 2 ? false : p.endPending;
  if (typeof endPending !== 'boolean' && p.phase !== 'start') throw bad('has no endPending flag');
  if (p.phase === 'start') return START_POSITION;
  if (p.phase !== 'copy' && p.phase !== 'stream') throw bad(`has an unknown phase ${String(p.phase)}`);
  const s = p.slot;
  if (s == null || typeof s.slot !== 'string' || typeof s.publication !== 'string' || !Array.isArray(s.boundaries)) throw bad('names no slot or publication');
  const lsns: unknown[] = [s.consistentLsn, ...s.boundaries.map((b: Partial<CdcBoundary> | null) => b?.lsn)];
  if (p.phase === 'copy') {
    if (!Number.isInteger(p.rows) || !Number.isInteger(p.table)) throw bad('has no copy counts');
    if (p.key !== null && !Array.isArray(p.key)) throw bad('has a snapshot key that is not a list');
  } else {
    if (!Number.isInteger(p.partialCount) || p.tx == null) throw bad('has no transaction');
    lsns.push(p.tx.commitLsn, p.tx.confirmLsn, p.tx.partialLsn);
  }
  try {
    for (const lsn of lsns) parseLsn(String(lsn));
  } catch (err) {
    throw bad((err as Error).message);
  }
  const slot = slotOf(s.slot, s.publication, String(s.consistentLsn), s.boundaries as readonly CdcBoundary[]);
  if (p.phase === 'copy') return copyPosition(slot, p.rows as number, p.table as number, p.key as KeyValues | null, endPending as boolean);
  return streamPosition(
    slot,
    txOf(String(p.tx!.commitLsn), String(p.tx!.confirmLsn), String(p.tx!.partialLsn)),
    p.partialCount as number,
    endPending as boolean,
  );
}

/**
 * Decides, for the changes the server sends after a restore, which the restored position already
 * emitted: whole transactions up to its commit LSN, and the first `partialCount` changes of the
 * transaction it was inside. Fed the stream in order: `begin` per transaction, `keep` per change.
 */
export class ReplayFilter {
  private skipInTx = 0;
  private skipTx = false;
  private skippedAtBegin = 0;

  constructor(private readonly restored: Pick<ResumePoint, 'commitLsn' | 'partialLsn' | 'partialCount'>) {}

  /** A transaction with commit LSN `commitLsn` begins. */
  begin(commitLsn: bigint): void {
    this.skipTx = commitLsn <= this.restored.commitLsn;
    this.skipInTx = !this.skipTx && commitLsn === this.restored.partialLsn ? this.restored.partialCount : 0;
    this.skippedAtBegin = this.skipInTx;
  }

  /** How many changes of the current transaction the checkpoint already emitted (they are skipped). */
  get skippedInTransaction(): number {
    return this.skippedAtBegin;
  }

  /** Whether the next change of the current transaction is new (not emitted before the checkpoint). */
  keep(): boolean {
    if (this.skipTx) return false;
    if (this.skipInTx > 0) {
      this.skipInTx--;
      return false;
    }
    return true;
  }

  /** Whether the current transaction is skipped whole (its commit is not news either). */
  get skippingTransaction(): boolean {
    return this.skipTx;
  }
}

/**
 * Why a restore cannot continue from the slot, or null when it can: the slot confirmed past the
 * checkpoint's position (a newer checkpoint completed and was acknowledged, so changes between are
 * gone from the slot).
 */
export function slotBehindCheck(slot: string, restoredConfirmLsn: bigint, slotConfirmedLsn: bigint): string | null {
  if (slotConfirmedLsn <= restoredConfirmLsn) return null;
  return `slot ${slot} confirmed ${formatLsn(slotConfirmedLsn)}, past the checkpoint's position ${formatLsn(restoredConfirmLsn)}: the changes between are no longer in the slot (was an older checkpoint restored?)`;
}

/**
 * What a user can do when the slot is past the restored checkpoint: a restart cannot help, and
 * neither can --accept-duplicates (the changes are gone, not merely committed twice).
 */
export function cannotRewindWayOut(slot: string): string {
  return (
    'A restart cannot bring them back, and --accept-duplicates does not help with this source. Ways out: resume from the newest checkpoint ' +
    `(the one the slot confirmed) if it is intact; or start the job without --from, which drops slot ${slot} and copies the tables again ` +
    '(empty what its sinks wrote first, or the copy is counted twice)'
  );
}
