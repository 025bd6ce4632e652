/**
 * The CDC source's position and the pure decisions around it: the versioned state it checkpoints,
 * which replayed changes a restored reader skips, and which LSN the slot may confirm when a
 * checkpoint completes. Nothing here talks to a server.
 *
 * A position names transactions by their commit LSN, which pgoutput sends in increasing order. A
 * checkpoint can fall inside a transaction's changes, so the position holds the last transaction
 * emitted whole and how many changes of the next one were emitted; after a restore the server
 * resends from the slot's confirmed position (never past the checkpoint's) and the reader drops
 * what the position says was emitted.
 */
import { RestoreError } from '../../../core/errors.ts';
import { LSN_ZERO, formatLsn, parseLsn } from './lsn.ts';
import type { KeyValues, SnapshotBoundary } from './snapshot-keys.ts';

/** `snapshot`: copying the tables; `stream`: reading the slot; `ended`: the end condition held. */
export type CdcPhase = 'snapshot' | 'stream' | 'ended';

/** Where a reader is; bigints in memory, text in the checkpoint (see `encodePosition`). */
export interface CdcPosition {
  readonly slot: string;
  readonly publication: string;
  phase: CdcPhase;
  /** The LSN the slot's snapshot is consistent with; snapshot rows carry it. */
  readonly consistentLsn: bigint;
  /** Commit LSN of the newest transaction whose changes were all emitted (0 when none). */
  commitLsn: bigint;
  /** Its end: the slot may confirm up to here. The consistent LSN before any transaction. */
  confirmLsn: bigint;
  /** Commit LSN of the transaction being emitted, and how many of its changes were (0 when between transactions). */
  partialLsn: bigint;
  partialCount: number;
  /** Snapshot rows emitted so far. */
  snapshotRows: number;
  /** Table index and primary key of the last snapshot row emitted (key null: not keyed, the copy cannot resume). */
  snapshotTable: number;
  snapshotKey: KeyValues | null;
  /** Where restores inside the copy read the rest from a later snapshot (snapshot-keys.ts). */
  boundaries: SnapshotBoundary[];
}

/** The state of a position as checkpointed, format version 1. */
export interface CdcStateV1 {
  readonly v: 1;
  readonly slot: string;
  readonly publication: string;
  readonly phase: CdcPhase;
  readonly consistentLsn: string;
  readonly commitLsn: string;
  readonly confirmLsn: string;
  readonly partialLsn: string;
  readonly partialCount: number;
  readonly snapshotRows: number;
  readonly snapshotTable: number;
  readonly snapshotKey: readonly unknown[] | null;
  readonly boundaries: ReadonlyArray<{ readonly table: number; readonly key: readonly unknown[] | null; readonly lsn: string }>;
}

/** A new position right after the slot was created at `consistentLsn`. */
export function initialPosition(slot: string, publication: string, consistentLsn: bigint, snapshot: boolean): CdcPosition {
  return {
    slot,
    publication,
    phase: snapshot ? 'snapshot' : 'stream',
    consistentLsn,
    commitLsn: LSN_ZERO,
    confirmLsn: consistentLsn,
    partialLsn: LSN_ZERO,
    partialCount: 0,
    snapshotRows: 0,
    snapshotTable: 0,
    snapshotKey: null,
    boundaries: [],
  };
}

export function encodePosition(p: CdcPosition): CdcStateV1 {
  return {
    v: 1,
    slot: p.slot,
    publication: p.publication,
    phase: p.phase,
    consistentLsn: formatLsn(p.consistentLsn),
    commitLsn: formatLsn(p.commitLsn),
    confirmLsn: formatLsn(p.confirmLsn),
    partialLsn: formatLsn(p.partialLsn),
    partialCount: p.partialCount,
    snapshotRows: p.snapshotRows,
    snapshotTable: p.snapshotTable,
    snapshotKey: p.snapshotKey,
    boundaries: p.boundaries.map((b) => ({ table: b.table, key: b.key, lsn: formatLsn(b.lsn) })),
  };
}

/** The position a checkpoint holds; RestoreError naming the source when it is not a version this reader knows. */
export function decodePosition(state: unknown, source: string): CdcPosition {
  const s = state as Partial<CdcStateV1> | null;
  const bad = (why: string): RestoreError => new RestoreError(`${source}: the checkpointed position ${why}`);
  if (s === null || typeof s !== 'object') throw bad('is not an object');
  if (s.v !== 1) throw bad(`has format version ${String(s.v)}; this version of Weir reads version 1`);
  if (typeof s.slot !== 'string' || typeof s.publication !== 'string') throw bad('names no slot or publication');
  if (s.phase !== 'snapshot' && s.phase !== 'stream' && s.phase !== 'ended') throw bad(`has an unknown phase ${String(s.phase)}`);
  if (!Number.isInteger(s.partialCount) || !Number.isInteger(s.snapshotRows) || !Number.isInteger(s.snapshotTable)) throw bad('has no counts');
  if (s.snapshotKey !== null && !Array.isArray(s.snapshotKey)) throw bad('has a snapshot key that is not a list');
  if (!Array.isArray(s.boundaries)) throw bad('has no snapshot boundaries');
  try {
    return {
      slot: s.slot,
      publication: s.publication,
      phase: s.phase,
      consistentLsn: parseLsn(String(s.consistentLsn)),
      commitLsn: parseLsn(String(s.commitLsn)),
      confirmLsn: parseLsn(String(s.confirmLsn)),
      partialLsn: parseLsn(String(s.partialLsn)),
      partialCount: s.partialCount!,
      snapshotRows: s.snapshotRows!,
      snapshotTable: s.snapshotTable!,
      snapshotKey: s.snapshotKey ?? null,
      boundaries: s.boundaries.map((b) => ({ table: b.table, key: b.key, lsn: parseLsn(String(b.lsn)) })),
    };
  } catch (err) {
    throw bad((err as Error).message);
  }
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

  constructor(private readonly restored: Pick<CdcPosition, 'commitLsn' | 'partialLsn' | 'partialCount'>) {}

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
 * The LSN each pending checkpoint may confirm, recorded at its snapshot. On completion of n the
 * slot confirms n's LSN and forgets n and older ones (a completed checkpoint subsumes them); an
 * aborted checkpoint is forgotten alone. Bounded: at most the checkpoints in flight.
 */
export class ConfirmLedger {
  private readonly pending = new Map<number, bigint>();

  record(checkpointId: number, confirmLsn: bigint): void {
    this.pending.set(checkpointId, confirmLsn);
  }

  /** The LSN checkpoint `checkpointId` lets the slot confirm; null when it recorded none. */
  complete(checkpointId: number): bigint | null {
    const lsn = this.pending.get(checkpointId) ?? null;
    for (const id of [...this.pending.keys()]) if (id <= checkpointId) this.pending.delete(id);
    return lsn;
  }

  abort(checkpointId: number): void {
    this.pending.delete(checkpointId);
  }

  get size(): number {
    return this.pending.size;
  }
}

/**
 * Why a restore cannot continue from the slot, or null when it can: the slot confirmed past the
 * checkpoint's position (a newer checkpoint completed and was acknowledged, so changes between are
 * gone from the slot).
 */
export function slotBehindCheck(restored: CdcPosition, slotConfirmedLsn: bigint): string | null {
  if (slotConfirmedLsn <= restored.confirmLsn) return null;
  return `slot ${restored.slot} confirmed ${formatLsn(slotConfirmedLsn)}, past the checkpoint's position ${formatLsn(restored.confirmLsn)}: the changes between are no longer in the slot (was an older checkpoint restored?)`;
}
