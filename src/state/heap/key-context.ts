/**
 * The mutable context every heap state object of one keyed backend reads on the record path: the
 * current key and its key group, the change listener, and which inner containers (list arrays,
 * map-state maps, accumulators) may be mutated in place because no live snapshot can see them.
 */
import type { KeyGroup } from '../../core/ids.ts';
import type { StateChangeListener } from '../backend.ts';
import type { Key } from '../key-groups.ts';

/** Shared, mutable record-path context of one heap keyed backend. */
export class KeyContext {
  key: Key = '';
  keyGroup: KeyGroup = -1 as KeyGroup;
  /** keyGroup - range.start; -1 until a key is set. */
  index = -1;
  /**
   * Bumped whenever what a state object resolved for a key may have changed behind its back: a
   * snapshot (its maps are pinned from then on), a restore, dispose. A state object may keep what
   * it looked up for a key while the key and the version stay the same.
   */
  version = 0;
  listener: StateChangeListener | null = null;
  /** Snapshots whose sync part ran and whose async part has not released its references. */
  liveSnapshots = 0;
  /** Containers created since the latest snapshot; replaced (not cleared) at each snapshot. */
  private owned = new WeakSet<object>();

  /** Called by the sync part of a snapshot: from now on every existing container is shared. */
  beginSnapshot(): void {
    this.version++;
    this.liveSnapshots++;
    this.owned = new WeakSet<object>();
  }

  endSnapshot(): void {
    this.liveSnapshots--;
  }

  /** True when `container` may be reachable from a live snapshot and so must be replaced, not mutated. */
  isShared(container: object): boolean {
    return this.liveSnapshots > 0 && !this.owned.has(container);
  }

  /** Records that `container` was created after the latest snapshot. */
  own(container: object): void {
    if (this.liveSnapshots > 0) this.owned.add(container);
  }

  /**
   * A value a user function may mutate in place (an accumulator, a reduce input): cloned once per
   * snapshot while one is live, so the snapshot keeps the value it captured.
   */
  protect<T>(value: T): T {
    if (this.liveSnapshots === 0 || typeof value !== 'object' || value === null) return value;
    if (this.owned.has(value)) return value;
    const copy = structuredClone(value);
    this.owned.add(copy as object);
    return copy;
  }
}
