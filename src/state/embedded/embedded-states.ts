/**
 * The embedded backend's keyed states: the same synchronous API as the heap backend's, over the
 * backend's cache of slots. Lists, maps and accumulators are one value per key (a map state's whole
 * `Map` is one store entry; see the backend's module comment for why), mutated in place only when
 * no live snapshot can see them.
 */
import type { AggregateFunction } from '../descriptors.ts';
import type { AggregatingState, ListState, MapState, ReducingState, ValueState } from '../state.ts';
import type { StateChangeListener } from '../backend.ts';
import type { SlotTable } from './slot-table.ts';

type ChangeOp = Parameters<StateChangeListener['onChange']>[3];

/** What the states need from the backend: the current key's value, read and written through the cache. */
export interface SlotAccess {
  /** The current key's value in working form, or undefined. */
  read(table: SlotTable): unknown;
  /** Sets the current key's value, or deletes it when `value` is undefined; reports `op` to the change listener. */
  write(table: SlotTable, value: unknown, op: ChangeOp, mapKey?: unknown): void;
  /**
   * The current key's container, safe to mutate in place (copied first when a live snapshot may see
   * it; created with `create` when absent, or undefined without one). The key counts as changed.
   */
  editable<C>(table: SlotTable, create: (() => C) | null, copy: (c: C) => C): C | undefined;
  /** Reports a change made in place to the change listener. */
  notify(table: SlotTable, op: ChangeOp, value: unknown, mapKey?: unknown): void;
}

const EMPTY_LIST: readonly unknown[] = Object.freeze([]);
const copyList = (l: unknown[]): unknown[] => l.slice();
type InnerMap = Map<string | number, unknown>;
const copyMap = (m: InnerMap): InnerMap => new Map(m);

export class EmbeddedValueState implements ValueState<unknown> {
  constructor(
    private readonly access: SlotAccess,
    private readonly table: SlotTable,
    private readonly defaultValue: unknown,
  ) {}

  value(): unknown {
    const v = this.access.read(this.table);
    return v === undefined ? this.defaultValue : v;
  }

  update(value: unknown): void {
    this.access.write(this.table, value, value === undefined ? 'clear' : 'set');
  }

  clear(): void {
    this.access.write(this.table, undefined, 'clear');
  }
}

export class EmbeddedListState implements ListState<unknown> {
  constructor(
    private readonly access: SlotAccess,
    private readonly table: SlotTable,
  ) {}

  get(): readonly unknown[] {
    return (this.access.read(this.table) as unknown[] | undefined) ?? EMPTY_LIST;
  }

  add(value: unknown): void {
    this.access.editable<unknown[]>(this.table, () => [], copyList)!.push(value);
    this.access.notify(this.table, 'append', value);
  }

  addAll(values: readonly unknown[]): void {
    if (values.length === 0) return;
    const list = this.access.editable<unknown[]>(this.table, () => [], copyList)!;
    for (let i = 0; i < values.length; i++) list.push(values[i]);
    for (let i = 0; i < values.length; i++) this.access.notify(this.table, 'append', values[i]);
  }

  update(values: readonly unknown[]): void {
    if (values.length === 0) this.access.write(this.table, undefined, 'clear');
    else this.access.write(this.table, values.slice(), 'set');
  }

  clear(): void {
    this.access.write(this.table, undefined, 'clear');
  }
}

export class EmbeddedMapState implements MapState<string | number, unknown> {
  constructor(
    private readonly access: SlotAccess,
    private readonly table: SlotTable,
  ) {}

  private current(): InnerMap | undefined {
    return this.access.read(this.table) as InnerMap | undefined;
  }

  get(key: string | number): unknown {
    return this.current()?.get(key);
  }

  contains(key: string | number): boolean {
    return this.current()?.has(key) ?? false;
  }

  entries(): IterableIterator<[string | number, unknown]> {
    return (this.current() ?? new Map()).entries();
  }

  keys(): IterableIterator<string | number> {
    return (this.current() ?? new Map()).keys();
  }

  values(): IterableIterator<unknown> {
    return (this.current() ?? new Map()).values();
  }

  isEmpty(): boolean {
    return (this.current()?.size ?? 0) === 0;
  }

  put(key: string | number, value: unknown): void {
    this.access.editable<InnerMap>(this.table, () => new Map(), copyMap)!.set(key, value);
    this.access.notify(this.table, 'mapPut', value, key);
  }

  remove(key: string | number): void {
    const current = this.current();
    if (current === undefined || !current.has(key)) return;
    if (current.size === 1) {
      this.access.write(this.table, undefined, 'mapRemove', key);
      return;
    }
    this.access.editable<InnerMap>(this.table, null, copyMap)!.delete(key);
    this.access.notify(this.table, 'mapRemove', undefined, key);
  }

  clear(): void {
    this.access.write(this.table, undefined, 'clear');
  }
}

/** A value a user function may mutate in place (reduce input, accumulator), copied first when a snapshot may see it. */
const cloneValue = <T>(v: T): T => (typeof v === 'object' && v !== null ? structuredClone(v) : v);

export class EmbeddedReducingState implements ReducingState<unknown> {
  constructor(
    private readonly access: SlotAccess,
    private readonly table: SlotTable,
    private readonly reduce: (a: unknown, b: unknown) => unknown,
  ) {}

  get(): unknown {
    return this.access.read(this.table);
  }

  add(value: unknown): void {
    const current = this.access.editable<unknown>(this.table, null, cloneValue);
    const next = current === undefined ? value : this.reduce(current, value);
    this.access.write(this.table, next, next === undefined ? 'clear' : 'set');
  }

  clear(): void {
    this.access.write(this.table, undefined, 'clear');
  }
}

export class EmbeddedAggregatingState implements AggregatingState<unknown, unknown> {
  constructor(
    private readonly access: SlotAccess,
    private readonly table: SlotTable,
    private readonly aggregate: AggregateFunction<unknown, unknown, unknown>,
  ) {}

  get(): unknown {
    const acc = this.access.read(this.table);
    return acc === undefined ? undefined : this.aggregate.getResult(acc);
  }

  add(value: unknown): void {
    const acc = this.access.editable<unknown>(this.table, () => this.aggregate.createAccumulator(), cloneValue);
    const next = this.aggregate.add(value, acc);
    this.access.write(this.table, next, next === undefined ? 'clear' : 'set');
  }

  clear(): void {
    this.access.write(this.table, undefined, 'clear');
  }
}
