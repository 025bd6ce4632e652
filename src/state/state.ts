/**
 * User-facing state: synchronous for every backend. Keyed state is scoped to the key of the record
 * being processed. Values are treated as immutable: update with a new value rather than mutating
 * one in place, so snapshots taken earlier stay unchanged.
 */
export interface ValueState<T> {
  value(): T | undefined;
  update(value: T): void;
  clear(): void;
}

export interface ListState<T> {
  get(): readonly T[];
  add(value: T): void;
  addAll(values: readonly T[]): void;
  update(values: readonly T[]): void;
  clear(): void;
}

export interface MapState<K extends string | number, V> {
  get(key: K): V | undefined;
  put(key: K, value: V): void;
  remove(key: K): void;
  contains(key: K): boolean;
  entries(): IterableIterator<[K, V]>;
  keys(): IterableIterator<K>;
  values(): IterableIterator<V>;
  isEmpty(): boolean;
  clear(): void;
}

export interface ReducingState<T> {
  get(): T | undefined;
  add(value: T): void;
  clear(): void;
}

export interface AggregatingState<IN, OUT> {
  get(): OUT | undefined;
  add(value: IN): void;
  clear(): void;
}
