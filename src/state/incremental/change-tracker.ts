/**
 * The keys changed since the last completed checkpoint, for incremental snapshots. Changes are kept
 * per snapshot interval ("epochs"): the sync phase of snapshot n closes the open epoch under id n.
 * A delta snapshot needs every epoch after the completed checkpoint it extends; completing n drops
 * the epochs up to n. An aborted snapshot's epoch is simply never dropped, so the next delta
 * includes its changes and nothing is lost. Tracking is bounded: past `trackedKeysMax` keys the
 * tracker gives up, and the next snapshot must be a new base.
 */
import type { Key } from '../key-groups.ts';

/** Changed keys by slot (one slot per state and key group, see `changeSlot`). */
export type ChangeSet = ReadonlyMap<number, ReadonlySet<Key>>;

/** The slot of a state's key group: states and key groups both fit in 16 bits. */
export function changeSlot(stateId: number, groupIndex: number): number {
  return stateId * 0x10000 + groupIndex;
}

export function slotGroupIndex(slot: number): number {
  return slot % 0x10000;
}

interface Epoch {
  readonly checkpointId: number;
  readonly changes: Map<number, Set<Key>>;
  readonly keys: number;
}

/** What a snapshot's sync phase learns: every unconfirmed change, or that changes were lost. */
export type ClosedChanges = { readonly complete: true; readonly changes: readonly ChangeSet[]; readonly keys: number } | { readonly complete: false };

/** Changed keys per epoch since the last completed checkpoint. */
export class ChangeTracker {
  private current = new Map<number, Set<Key>>();
  private currentKeys = 0;
  private closed: Epoch[] = [];
  private trackedKeys = 0;
  /** Set when tracking gave up; cleared by the next sync phase, which must write a base. */
  private lost = false;
  /** Deltas may extend only completed checkpoints at or after this one (the first base after changes were lost). */
  private floor = -1;

  constructor(public trackedKeysMax: number) {}

  record(slot: number, key: Key): void {
    if (this.lost) return;
    let set = this.current.get(slot);
    if (set === undefined) this.current.set(slot, (set = new Set()));
    const before = set.size;
    set.add(key);
    if (set.size === before) return;
    this.currentKeys++;
    if (++this.trackedKeys > this.trackedKeysMax) this.giveUp();
  }

  private giveUp(): void {
    this.lost = true;
    this.current = new Map();
    this.currentKeys = 0;
    this.closed = [];
    this.trackedKeys = 0;
  }

  /**
   * The sync phase of snapshot `checkpointId`: closes the open epoch and returns every change not
   * yet confirmed, oldest first, or `complete: false` when changes were lost (write a base).
   */
  close(checkpointId: number): ClosedChanges {
    if (this.lost) {
      this.lost = false;
      this.floor = checkpointId;
      return { complete: false };
    }
    this.closed.push({ checkpointId, changes: this.current, keys: this.currentKeys });
    this.current = new Map();
    this.currentKeys = 0;
    let keys = 0;
    for (const e of this.closed) keys += e.keys;
    return { complete: true, changes: this.closed.map((e) => e.changes), keys };
  }

  /** Whether a delta may extend completed checkpoint `checkpointId` (no changes since it were lost). */
  canExtend(checkpointId: number): boolean {
    return !this.lost && checkpointId >= this.floor;
  }

  /** Checkpoint `checkpointId` completed and is now the base of deltas: its changes are persisted. */
  confirm(checkpointId: number): void {
    const kept = this.closed.filter((e) => e.checkpointId > checkpointId);
    for (const e of this.closed) if (e.checkpointId <= checkpointId) this.trackedKeys -= e.keys;
    this.closed = kept;
  }

  /** Keys tracked now (an upper bound: a key changed in two epochs counts twice). */
  get size(): number {
    return this.trackedKeys;
  }
}
