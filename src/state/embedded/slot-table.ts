/**
 * The embedded backend's cache of one state: per key group a `Map<Key, Slot>` of hot and dirty
 * entries in front of the local store, copy-on-write against snapshots like the heap backend's
 * tables. A snapshot pins the maps it captured (its view of every cached entry); the first change
 * to a pinned map replaces it with a copy. Slots themselves are replaced, not changed, when a live
 * snapshot may see them (see `Slot.epoch`).
 */
import { AssertionError } from '../../core/assert.ts';
import type { StateKind } from '../descriptors.ts';
import type { Key } from '../key-groups.ts';

/** The value of a slot whose key has no value (deleted, or known to be absent from the store). */
export const ABSENT: unique symbol = Symbol('absent');

/** One cached entry. */
export class Slot {
  /** Set on every access; the eviction sweep clears it and evicts slots still clear at the next visit. */
  hot = true;
  /** The epoch in which its key was last given to the change tracker (once per epoch is enough). */
  trackedEpoch = -1;

  constructor(
    /** Working form (map state as `Map`), or ABSENT. */
    public value: unknown,
    /** Changed since it was read from or written to the store. */
    public dirty: boolean,
    /** Snapshot epoch it was created in: a slot from an earlier epoch may be seen by a live snapshot. */
    readonly epoch: number,
  ) {}
}

export type SlotMap = Map<Key, Slot>;

/** The cached entries of one state name, by key group. */
export class SlotTable {
  readonly groups: Array<SlotMap | undefined>;
  /** Per group: how many live snapshots captured its current map. */
  readonly pins: Uint32Array;

  constructor(
    readonly name: string,
    readonly kind: StateKind,
    /** The state's id in store keys (1-based, per backend). */
    readonly stateId: number,
    groupCount: number,
  ) {
    this.groups = new Array<SlotMap | undefined>(groupCount).fill(undefined);
    this.pins = new Uint32Array(groupCount);
  }

  /** The map of group `index` for changing: created if absent, copied if a snapshot holds it. */
  writable(index: number): SlotMap {
    const map = this.groups[index];
    if (map !== undefined && this.pins[index] === 0) return map;
    if (!(index >= 0 && index < this.groups.length)) {
      throw new AssertionError(`state "${this.name}": no current key (or its key group is outside the backend's range); group index ${index}`);
    }
    const fresh: SlotMap = map === undefined ? new Map() : new Map(map);
    this.groups[index] = fresh;
    this.pins[index] = 0;
    return fresh;
  }

  /** Puts `map` in place of group `index`'s map (the eviction sweep rebuilds maps). */
  replace(index: number, map: SlotMap): void {
    this.groups[index] = map;
    this.pins[index] = 0;
  }

  capture(): Array<SlotMap | undefined> {
    const captured = this.groups.slice();
    for (let i = 0; i < captured.length; i++) if (captured[i] !== undefined) this.pins[i] = this.pins[i]! + 1;
    return captured;
  }

  release(captured: ReadonlyArray<SlotMap | undefined>): void {
    for (let i = 0; i < captured.length; i++) {
      const map = captured[i];
      if (map !== undefined && this.groups[i] === map && this.pins[i]! > 0) this.pins[i] = this.pins[i]! - 1;
    }
  }

  size(): number {
    let n = 0;
    for (const map of this.groups) if (map !== undefined) n += map.size;
    return n;
  }
}
