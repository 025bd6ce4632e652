/**
 * Heap keyed map state: one `Map` per key. A map a live snapshot may see is never mutated; the
 * first write after a snapshot copies it. Removing the last entry removes the key.
 */
import type { Key } from '../key-groups.ts';
import type { MapState } from '../state.ts';
import type { KeyContext } from './key-context.ts';
import type { StateTable } from './state-table.ts';
import { clearCurrentKey } from './heap-value-states.ts';

type MapKey = string | number;
type InnerMap = Map<MapKey, unknown>;

const EMPTY: InnerMap = new Map();

/**
 * Map state bound to the backend's current key. Callers touch it several times per record (a
 * window operator reads and writes each window's entry and checks its timers), and hot keys come
 * back record after record, so the key's inner map is looked up once and kept, with whether it may
 * be written in place, until the current key or the key context's version (snapshot, restore)
 * changes, instead of hashing the key again on every call. Only this object (one per state name)
 * writes the current key's entry of its table, which is what keeps the kept map right.
 */
export class HeapMapState implements MapState<MapKey, unknown> {
  /** The key `inner` and `writable` were resolved for. */
  private resolvedKey: Key = '';
  /** The context version they were resolved in; -1: never. */
  private resolvedVersion = -1;
  /** The key's map (undefined: the key has none), valid for `resolvedKey` in `resolvedVersion`. */
  private inner: InnerMap | undefined = undefined;
  /** `inner` is in the table's writable group map and owned: it may be mutated in place. */
  private writable = false;

  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
  ) {}

  /** Whether `inner` and `writable` describe the current key. Equal keys are `===` (NaN just misses). */
  private resolved(): boolean {
    return this.resolvedKey === this.ctx.key && this.resolvedVersion === this.ctx.version;
  }

  private current(): InnerMap {
    if (!this.resolved()) this.resolve();
    const inner = this.inner;
    return inner === undefined ? EMPTY : inner;
  }

  private resolve(): void {
    const ctx = this.ctx;
    const map = this.table.groups[ctx.index];
    this.inner = map === undefined ? undefined : (map.get(ctx.key) as InnerMap | undefined);
    this.writable = false;
    this.resolvedKey = ctx.key;
    this.resolvedVersion = ctx.version;
  }

  /** The current key's map, ready to mutate: created, or copied when a snapshot may see it. */
  private mutable(): InnerMap {
    const ctx = this.ctx;
    if (this.resolved()) {
      if (this.writable) return this.inner!;
      // Read in this version from the key group's map, which nothing replaced since (another key's
      // write would have re-resolved this object); unpinned, and the inner map not shared with a
      // live snapshot, it may be written in place.
      const inner = this.inner;
      if (inner !== undefined && this.table.pins[ctx.index] === 0 && !ctx.isShared(inner)) {
        this.writable = true;
        return inner;
      }
    }
    const outer = this.table.writable(ctx.index);
    let inner = outer.get(ctx.key) as InnerMap | undefined;
    if (inner === undefined || ctx.isShared(inner)) {
      inner = inner === undefined ? new Map() : new Map(inner);
      ctx.own(inner);
      outer.set(ctx.key, inner);
    }
    this.inner = inner;
    this.writable = true;
    this.resolvedKey = ctx.key;
    this.resolvedVersion = ctx.version;
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
    this.resolvedKey = this.ctx.key;
    this.resolvedVersion = this.ctx.version;
  }
}
