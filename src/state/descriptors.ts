/** State descriptors: name, kind and the functions a state needs; state is mapped by name within an operator uid. */
/** The kinds of state a descriptor can name. */
export type StateKind = 'value' | 'list' | 'map' | 'reducing' | 'aggregating';

/**
 * Names a keyed value state (`RuntimeContext.getState`). Values must be serialisable with msgpack
 * (plain data: numbers, strings, arrays, objects, Maps, bigints, Uint8Arrays).
 */
export class ValueStateDescriptor<T> {
  /** The kind of state. */
  readonly kind = 'value' as const;
  /**
   * A descriptor.
   * @param name the state's name, unique within its operator; state is restored by operator uid and name.
   * @param defaultValue what `value()` returns for a key without a value (default undefined).
   */
  constructor(
    readonly name: string,
    readonly defaultValue?: T,
  ) {}
}

/** Names a list state: keyed (`getListState`) or operator state (`getOperatorListState`, `getUnionListState`). */
export class ListStateDescriptor<T> {
  /** The kind of state. */
  readonly kind = 'list' as const;
  /** @internal carries the element type */
  declare readonly _type?: T;
  /**
   * A descriptor.
   * @param name the state's name, unique within its operator.
   */
  constructor(readonly name: string) {}
}

/** Names a keyed map state (`getMapState`): a map per key, with string or number map keys. */
export class MapStateDescriptor<K extends string | number, V> {
  /** The kind of state. */
  readonly kind = 'map' as const;
  /** @internal carries the key and value types */
  declare readonly _type?: [K, V];
  /**
   * A descriptor.
   * @param name the state's name, unique within its operator.
   */
  constructor(readonly name: string) {}
}

/** Names a keyed reducing state (`getReducingState`): added values are folded with `reduce`. */
export class ReducingStateDescriptor<T> {
  /** The kind of state. */
  readonly kind = 'reducing' as const;
  /**
   * A descriptor.
   * @param name the state's name, unique within its operator.
   * @param reduce combines the current value with an added one; must be deterministic.
   */
  constructor(
    readonly name: string,
    readonly reduce: (a: T, b: T) => T,
  ) {}
}

/** An aggregate function: accumulator created, added to, and read out. */
export interface AggregateFunction<IN, ACC, OUT> {
  /** A new, empty accumulator. */
  createAccumulator(): ACC;
  /** The accumulator with `value` added (return a new one rather than mutating it). */
  add(value: IN, accumulator: ACC): ACC;
  /** The result an accumulator stands for. */
  getResult(accumulator: ACC): OUT;
  /**
   * One accumulator holding both (return a new one). Needed only where accumulators merge: aggregates
   * on session (merging) windows.
   */
  merge?(a: ACC, b: ACC): ACC;
}

/** Names a keyed aggregating state (`getAggregatingState`): added values go into an accumulator. */
export class AggregatingStateDescriptor<IN, ACC, OUT> {
  /** The kind of state. */
  readonly kind = 'aggregating' as const;
  /**
   * A descriptor.
   * @param name the state's name, unique within its operator.
   * @param aggregate how values are accumulated and read out.
   */
  constructor(
    readonly name: string,
    readonly aggregate: AggregateFunction<IN, ACC, OUT>,
  ) {}
}

export type StateDescriptor =
  | ValueStateDescriptor<any>
  | ListStateDescriptor<any>
  | MapStateDescriptor<any, any>
  | ReducingStateDescriptor<any>
  | AggregatingStateDescriptor<any, any, any>;
