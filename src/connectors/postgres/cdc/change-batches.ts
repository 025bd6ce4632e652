/**
 * Turns the CDC reader's queue entries (changes, and marks for transaction bounds, the end of the
 * copy and the setup's placing of the slot) into split batches: the changes as records and, for
 * each, the position after it. Marks that follow a change are folded into that change's position
 * (nothing went downstream between them), so a barrier after the last change of a transaction
 * snapshots the transaction as whole, as the slot can confirm it; marks with no change after them
 * in a batch move the position through `endPosition`. Pure: no server, no clock.
 *
 * The end condition ends the split at the change it holds for, unless the stream has not yet
 * caught up with the newest boundary of a resumed copy (cdc-position.ts): then the split ends at
 * the reader's `caught-up` mark, and the positions in between carry `endPending`.
 */
import { assert } from '../../../core/assert.ts';
import type { SplitBatch } from '../../../runtime/split-source.ts';
import { type CdcPosition, type CdcSlot, type CdcTx, caughtUpAt, copyPosition, LSN_ZERO_TEXT, START_POSITION, streamPosition, txOf } from './cdc-position.ts';
import type { ChangeQueue } from './change-queue.ts';
import type { ChangeRecord } from './change-record.ts';
import type { KeyValues, TableKey } from './snapshot-keys.ts';

/** Queue entries besides changes. */
export type Mark =
  /** The setup placed the split: the slot was created (or the copy resumed from a new snapshot). */
  | { readonly kind: 'position'; readonly position: CdcPosition }
  /** The copy rows that follow are of table index `table`, whose primary key is `key`. */
  | { readonly kind: 'table'; readonly table: number; readonly key: TableKey | null }
  /** A transaction with commit LSN `lsn` begins; `emitted` of its changes were emitted before the restore (and are skipped). */
  | { readonly kind: 'begin'; readonly lsn: string; readonly emitted: number }
  /** The transaction with commit LSN `lsn` ends at `endLsn`. */
  | { readonly kind: 'commit'; readonly lsn: string; readonly endLsn: string }
  /** The copy ended: the stream follows from the slot's consistent point. */
  | { readonly kind: 'snapshot-end' }
  /** The stream replayed every transaction committed up to the slot's newest boundary (a pending end ends the split here). */
  | { readonly kind: 'caught-up' };

/** What the reader's queue holds. */
export type Entry = ChangeRecord | Mark;

/** The source's only split: the replication slot. */
export const SLOT_SPLIT_ID = 'slot';

const NO_TX: CdcTx = txOf(LSN_ZERO_TEXT, LSN_ZERO_TEXT, LSN_ZERO_TEXT);

/** Tracks the split's position through the entries and cuts them into batches. */
export class ChangeBatcher {
  private phase: CdcPosition['phase'] = 'start';
  private slot: CdcSlot | null = null;
  /** Copy: rows emitted, table index and key of the last one; the table and key of the rows to come. */
  private rows = 0;
  private table = 0;
  private key: KeyValues | null = null;
  private copyTable = 0;
  private copyKey: TableKey | null = null;
  /** Stream: the transaction bounds and changes of the partial one emitted. */
  private tx: CdcTx = NO_TX;
  private partialCount = 0;
  private endedFlag = false;
  /** The end condition held before the stream caught up; the split ends once it has. */
  private endPending = false;
  /** The stream replayed everything up to the slot's newest boundary (always, without one). */
  private caughtUp = true;

  /** Starts at `position` (the assigned one: the restored, or `START_POSITION`). */
  constructor(
    position: CdcPosition,
    private readonly endWhen: ((change: ChangeRecord) => boolean) | null,
  ) {
    this.place(position);
  }

  /** The end condition held for a change taken: the split ended. */
  get ended(): boolean {
    return this.endedFlag;
  }

  /**
   * Takes up to `entriesMax` entries of `queue`: a batch of the changes among them with their
   * positions, ending at a change `endWhen` holds for; null when they moved nothing.
   */
  take(queue: ChangeQueue<Entry>, entriesMax: number): SplitBatch<ChangeRecord, CdcPosition> | null {
    const records: ChangeRecord[] = [];
    const positions: CdcPosition[] = [];
    // the position of the last change taken is made when the next change comes or the batch ends
    let pending = false;
    let moved = false;
    for (let n = 0; n < entriesMax && !this.endedFlag; n++) {
      const e = queue.peek();
      if (e === undefined) break;
      queue.drop();
      switch (e.kind) {
        case 'position':
          this.place(e.position);
          moved = true;
          break;
        case 'table':
          this.copyTable = e.table;
          this.copyKey = e.key;
          break;
        case 'begin':
          this.tx = txOf(this.tx.commitLsn, this.tx.confirmLsn, e.lsn);
          this.partialCount = e.emitted;
          moved = true;
          break;
        case 'commit':
          this.tx = txOf(e.lsn, e.endLsn, LSN_ZERO_TEXT);
          this.partialCount = 0;
          moved = true;
          break;
        case 'snapshot-end':
          this.phase = 'stream';
          this.tx = txOf(LSN_ZERO_TEXT, this.slot!.consistentLsn, LSN_ZERO_TEXT);
          this.partialCount = 0;
          moved = true;
          break;
        case 'caught-up':
          this.caughtUp = true;
          if (this.endPending) {
            this.endedFlag = true;
            moved = true;
          }
          break;
        default:
          if (pending) positions.push(this.position());
          records.push(e);
          this.advance(e);
          pending = true;
          if (this.endWhen?.(e)) {
            if (this.caughtUp) this.endedFlag = true;
            else this.endPending = true;
          }
      }
    }
    if (pending) positions.push(this.position());
    if (records.length > 0) return { splitId: SLOT_SPLIT_ID, records, positions, splitEnded: this.endedFlag };
    return moved ? { splitId: SLOT_SPLIT_ID, records, positions, endPosition: this.position(), splitEnded: this.endedFlag } : null;
  }

  /** The position now, as a new frozen value. */
  position(): CdcPosition {
    switch (this.phase) {
      case 'start':
        return START_POSITION;
      case 'copy':
        return copyPosition(this.slot!, this.rows, this.table, this.key, this.endPending);
      case 'stream':
        return streamPosition(this.slot!, this.tx, this.partialCount, this.endPending);
    }
  }

  private place(p: CdcPosition): void {
    this.phase = p.phase;
    this.caughtUp = caughtUpAt(p);
    if (p.phase === 'start') return;
    this.slot = p.slot;
    this.endPending = p.endPending;
    // a pending end restored where the stream had caught up already (not written so, but harmless)
    if (this.endPending && this.caughtUp) this.endedFlag = true;
    if (p.phase === 'copy') {
      this.rows = p.rows;
      this.table = p.table;
      this.key = p.key;
    } else {
      this.tx = p.tx;
      this.partialCount = p.partialCount;
    }
  }

  private advance(e: ChangeRecord): void {
    if (this.phase === 'stream') {
      this.partialCount++;
      return;
    }
    assert(this.phase === 'copy' && e.snapshot, () => `a ${e.snapshot ? 'snapshot' : 'streamed'} ${e.kind} in the ${this.phase} phase of the CDC source`);
    this.rows++;
    this.table = this.copyTable;
    this.key = this.copyKey === null ? null : keyOf(this.copyKey, e.after!);
  }
}

/** A row's key values in key column order, frozen (positions share nothing mutable). */
export function keyOf(key: TableKey, row: Readonly<Record<string, unknown>>): KeyValues {
  const columns = key.columns;
  const values: unknown[] = new Array(columns.length);
  for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!];
  return Object.freeze(values);
}
