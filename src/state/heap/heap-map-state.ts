/**
 * Heap keyed map state: one `Map` per key. A map a live snapshot may see is never mutated; the
 * first write after a snapshot copies it. Removing the last entry removes the key.
 */
import type { MapState } from '../state.ts';
import type { KeyContext } from './key-context.ts';
import type { StateTable } from './state-table.ts';
import { clearCurrentKey } from './heap-value-states.ts';

type MapKey = string | number;
type InnerMap = Map<MapKey, unknown>;

const EMPTY: InnerMap = new Map();

/**
 * Map state bound to the backend's current key. Callers touch it several times per record (a
 * window operator reads and writes each window's entry and checks its timers), so the current
 * key's inner map is looked up once per key context epoch and kept, with whether it may be written
 * in place, instead of hashing the key again on every call.
 */
export class HeapMapState implements MapState<MapKey, unknown> {
  /** The epoch `inner` and `writable` were resolved in; -1: never. */
  private resolvedEpoch = -1;
  /** The current key's map (undefined: the key has none), valid while the epoch is `resolvedEpoch`. */
  private inner: InnerMap | undefined = undefined;
  /** `inner` is in the table's writable group map and owned: it may be mutated in place. */
  private writable = false;

  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
  ) {}

  private current(): InnerMap {
    if (this.resolvedEpoch !== this.ctx.epoch) this.resolve();
    const inner = this.inner;
    return inner === undefined ? EMPTY : inner;
  }

  private resolve(): void {
    const map = this.table.groups[this.ctx.index];
    this.inner = map === undefined ? undefined : (map.get(this.ctx.key) as InnerMap | undefined);
    this.writable = false;
    this.resolvedEpoch = this.ctx.epoch;
  }

  /** The current key's map, ready to mutate: created, or copied when a snapshot may see it. */
  private mutable(): InnerMap {
    if (this.resolvedEpoch === this.ctx.epoch) {
      if (this.writable) return this.inner!;
      // Read in this epoch from the key group's map, which only a write of this state object
      // (one per name) could have replaced since: unpinned, it is the writable map already.
      const inner = this.inner;
      if (inner !== undefined && this.table.pins[this.ctx.index] === 0 && !this.ctx.isShared(inner)) {
        this.writable = true;
        return inner;
      }
    }
    const outer = this.table.writable(this.ctx.index);
    let inner = outer.get(this.ctx.key) as InnerMap | undefined;
    if (inner === undefined || this.ctx.isShared(inner)) {
      inner = inner === undefined ? new Map() : new Map(inner);
      this.ctx.own(inner);
      outer.set(this.ctx.key, inner);
    }
    this.inner = inner;
    this.writable = true;
    this.resolvedEpoch = this.ctx.epoch;
    return inner;
  }

  get(key: MapKey): unknown {
    return this.current().get(key);
  }

  contains(key: MapKey): boolean {
    return this.current().has(key);
  }

  entries(): IterableIterator<[MapKey, unknown]> {
    return this.current().entries();
  }

  keys(): IterableIterator<MapKey> {
    return this.current().keys();
  }

  values(): IterableIterator<unknown> {
    return this.current().values();
  }

  isEmpty(): boolean {
    return this.current().size === 0;
  }

  put(key: MapKey, value: unknown): void {
    this.mutable().set(key, value);
    const listener = this.ctx.listener;
    if (listener !== null) listener.onChange(this.table.name, this.ctx.keyGroup, this.ctx.key, 'mapPut', value, key);
  }

  remove(key: MapKey): void {
    const current = this.current();
    if (!current.has(key)) return;
    if (current.size === 1) {
      this.table.writable(this.ctx.index).delete(this.ctx.key);
      this.inner = undefined;
      this.writable = false;
    } else {
      this.mutable().delete(key);
    }
    const listener = this.ctx.listener;
    if (listener !== null) listener.onChange(this.table.name, this.ctx.keyGroup, this.ctx.key, 'mapRemove', undefined, key);
  }

  clear(): void {
    clearCurrentKey(this.ctx, this.table);
    this.inner = undefined;
    this.writable = false;
    this.resolvedEpoch = this.ctx.epoch;
  }
}
