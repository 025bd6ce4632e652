/**
 * The working state of one state name in a heap keyed backend: one `Map<Key, value>` per key group
 * of the backend's range, created lazily, with copy-on-write against snapshots. A snapshot pins
 * the maps it captured; the first write to a pinned map copies it first, so the snapshot's view
 * never changes and taking it costs O(key groups), not O(keys).
 */
import { AssertionError } from '../../core/assert.ts';
import type { StateKind } from '../descriptors.ts';
import type { Key } from '../key-groups.ts';

export type GroupMap = Map<Key, unknown>;

/** The per-key-group maps of one state name, copy-on-write against snapshots. */
export class StateTable {
  readonly groups: Array<GroupMap | undefined>;
  /** Per group: how many live snapshots captured the group's current map. */
  readonly pins: Uint32Array;

  constructor(
    readonly name: string,
    readonly kind: StateKind,
    groupCount: number,
  ) {
    this.groups = new Array<GroupMap | undefined>(groupCount).fill(undefined);
    this.pins = new Uint32Array(groupCount);
  }

  /** The map of group `index` for writing: created if absent, copied if a snapshot holds it. */
  writable(index: number): GroupMap {
    const map = this.groups[index];
    if (map !== undefined && this.pins[index] === 0) return map;
    return this.replace(index, map);
  }

  private replace(index: number, map: GroupMap | undefined): GroupMap {
    if (!(index >= 0 && index < this.groups.length)) {
      throw new AssertionError(`state "${this.name}": no current key (or its key group is outside the backend's range); group index ${index}`);
    }
    const fresh: GroupMap = map === undefined ? new Map() : new Map(map);
    this.groups[index] = fresh;
    this.pins[index] = 0;
    return fresh;
  }

  /** Captures the current maps for a snapshot and pins them. */
  capture(): Array<GroupMap | undefined> {
    const captured = this.groups.slice();
    for (let i = 0; i < captured.length; i++) {
      if (captured[i] !== undefined) this.pins[i] = this.pins[i]! + 1;
    }
    return captured;
  }

  /** Unpins what `capture` pinned; maps that were replaced since are no longer pinned anyway. */
  release(captured: ReadonlyArray<GroupMap | undefined>): void {
    for (let i = 0; i < captured.length; i++) {
      const map = captured[i];
      if (map !== undefined && this.groups[i] === map && this.pins[i]! > 0) this.pins[i] = this.pins[i]! - 1;
    }
  }

  keyCount(): number {
    return countKeys(this.groups);
  }
}

export function countKeys(groups: ReadonlyArray<GroupMap | undefined>): number {
  let n = 0;
  for (const map of groups) if (map !== undefined) n += map.size;
  return n;
}
