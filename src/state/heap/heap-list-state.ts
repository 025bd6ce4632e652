/**
 * Heap keyed list state: one array per key. An array a live snapshot may see is never mutated;
 * the first append after a snapshot copies it. `get()` returns the stored array itself (no copy),
 * which later appends may extend, so read it before writing.
 */
import type { ListState } from '../state.ts';
import type { KeyContext } from './key-context.ts';
import type { StateTable } from './state-table.ts';
import { clearCurrentKey } from './heap-value-states.ts';

const EMPTY: readonly unknown[] = Object.freeze([]);

/** List state bound to the backend's current key. */
export class HeapListState implements ListState<unknown> {
  constructor(
    private readonly ctx: KeyContext,
    private readonly table: StateTable,
  ) {}

  get(): readonly unknown[] {
    const map = this.table.groups[this.ctx.index];
    const list = map === undefined ? undefined : (map.get(this.ctx.key) as unknown[] | undefined);
    return list === undefined ? EMPTY : list;
  }

  add(value: unknown): void {
    this.appendable().push(value);
    this.notifyAppend(value);
  }

  addAll(values: readonly unknown[]): void {
    if (values.length === 0) return;
    const list = this.appendable();
    for (let i = 0; i < values.length; i++) list.push(values[i]);
    for (let i = 0; i < values.length; i++) this.notifyAppend(values[i]);
  }

  update(values: readonly unknown[]): void {
    if (values.length === 0) {
      clearCurrentKey(this.ctx, this.table);
      return;
    }
    const list = values.slice();
    this.ctx.own(list);
    this.table.writable(this.ctx.index).set(this.ctx.key, list);
    const listener = this.ctx.listener;
    if (listener !== null) listener.onChange(this.table.name, this.ctx.keyGroup, this.ctx.key, 'set', list);
  }

  clear(): void {
    clearCurrentKey(this.ctx, this.table);
  }

  /** The current key's array, ready to push onto: created, or copied when a snapshot may see it. */
  private appendable(): unknown[] {
    const map = this.table.writable(this.ctx.index);
    const list = map.get(this.ctx.key) as unknown[] | undefined;
    if (list !== undefined && !this.ctx.isShared(list)) return list;
    const fresh: unknown[] = list === undefined ? [] : list.slice();
    this.ctx.own(fresh);
    map.set(this.ctx.key, fresh);
    return fresh;
  }

  private notifyAppend(value: unknown): void {
    const listener = this.ctx.listener;
    if (listener !== null) listener.onChange(this.table.name, this.ctx.keyGroup, this.ctx.key, 'append', value);
  }
}
