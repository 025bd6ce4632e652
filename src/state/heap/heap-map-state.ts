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

/** Map state bound to the backend's current key. */
export class HeapMapState implements MapState<MapKey, unknown> {
  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
  ) {}

  private current(): InnerMap {
    const map = this.table.groups[this.ctx.index];
    const inner = map === undefined ? undefined : (map.get(this.ctx.key) as InnerMap | undefined);
    return inner === undefined ? EMPTY : inner;
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
    const outer = this.table.writable(this.ctx.index);
    let inner = outer.get(this.ctx.key) as InnerMap | undefined;
    if (inner === undefined || this.ctx.isShared(inner)) {
      inner = inner === undefined ? new Map() : new Map(inner);
      this.ctx.own(inner);
      outer.set(this.ctx.key, inner);
    }
    inner.set(key, value);
    const listener = this.ctx.listener;
    if (listener !== null) listener.onChange(this.table.name, this.ctx.keyGroup, this.ctx.key, 'mapPut', value, key);
  }

  remove(key: MapKey): void {
    if (!this.current().has(key)) return;
    const outer = this.table.writable(this.ctx.index);
    const inner = outer.get(this.ctx.key) as InnerMap;
    if (inner.size === 1) {
      outer.delete(this.ctx.key);
    } else if (this.ctx.isShared(inner)) {
      const copy = new Map(inner);
      copy.delete(key);
      this.ctx.own(copy);
      outer.set(this.ctx.key, copy);
    } else {
      inner.delete(key);
    }
    const listener = this.ctx.listener;
    if (listener !== null) listener.onChange(this.table.name, this.ctx.keyGroup, this.ctx.key, 'mapRemove', undefined, key);
  }

  clear(): void {
    clearCurrentKey(this.ctx, this.table);
  }
}
