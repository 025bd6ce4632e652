/**
 * User-facing state: synchronous for every backend. Keyed state is scoped to the key of the record
 * being processed. Values are treated as immutable: update with a new value rather than mutating
 * one in place, so snapshots taken earlier stay unchanged.
 */
/** One value per key. */
export interface ValueState<T> {
  /** The current key's value, or the descriptor's default when it has none. */
  value(): T | undefined;
  /** Sets the current key's value. */
  update(value: T): void;
  /** Removes the current key's value. */
  clear(): void;
}

/** A list per key (keyed), or per subtask (operator list state). */
export interface ListState<T> {
  /** The elements, in the order added (empty when none). */
  get(): readonly T[];
  /** Appends one element. */
  add(value: T): void;
  /** Appends several elements. */
  addAll(values: readonly T[]): void;
  /** Replaces the whole list. */
  update(values: readonly T[]): void;
  /** Empties the list. */
  clear(): void;
}

/** A map per key, with string or number map keys. */
export interface MapState<K extends string | number, V> {
  /** The value under `key`, or undefined. */
  get(key: K): V | undefined;
  /** Sets the value under `key`. */
  put(key: K, value: V): void;
  /** Removes `key`. */
  remove(key: K): void;
  /** Whether `key` has a value. */
  contains(key: K): boolean;
  /** The entries (in no guaranteed order). */
  entries(): IterableIterator<[K, V]>;
  /** The map keys. */
  keys(): IterableIterator<K>;
  /** The values. */
  values(): IterableIterator<V>;
  /** Whether the current key's map is empty. */
  isEmpty(): boolean;
  /** Removes every entry of the current key's map. */
  clear(): void;
}

/** A value per key that folds every added value with the descriptor's reduce function. */
export interface ReducingState<T> {
  /** The folded value, or undefined when nothing was added. */
  get(): T | undefined;
  /** Folds `value` in. */
  add(value: T): void;
  /** Forgets the folded value. */
  clear(): void;
}

/** A value per key that aggregates every added value through the descriptor's accumulator. */
export interface AggregatingState<IN, OUT> {
  /** The aggregate's result, or undefined when nothing was added. */
  get(): OUT | undefined;
  /** Adds `value` to the accumulator. */
  add(value: IN): void;
  /** Forgets the accumulator. */
  clear(): void;
}
