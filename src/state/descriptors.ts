/** State descriptors: name, kind and the functions a state needs; state is mapped by name within an operator uid. */
export type StateKind = 'value' | 'list' | 'map' | 'reducing' | 'aggregating';

export class ValueStateDescriptor<T> {
  readonly kind = 'value' as const;
  constructor(readonly name: string, readonly defaultValue?: T) {}
}

export class ListStateDescriptor<T> {
  readonly kind = 'list' as const;
  declare readonly _type?: T;
  constructor(readonly name: string) {}
}

export class MapStateDescriptor<K extends string | number, V> {
  readonly kind = 'map' as const;
  declare readonly _type?: [K, V];
  constructor(readonly name: string) {}
}

export class ReducingStateDescriptor<T> {
  readonly kind = 'reducing' as const;
  constructor(readonly name: string, readonly reduce: (a: T, b: T) => T) {}
}

/** An aggregate function: accumulator created, added to, and read out. */
export interface AggregateFunction<IN, ACC, OUT> {
  createAccumulator(): ACC;
  add(value: IN, accumulator: ACC): ACC;
  getResult(accumulator: ACC): OUT;
}

export class AggregatingStateDescriptor<IN, ACC, OUT> {
  readonly kind = 'aggregating' as const;
  constructor(readonly name: string, readonly aggregate: AggregateFunction<IN, ACC, OUT>) {}
}

export type StateDescriptor =
  | ValueStateDescriptor<any>
  | ListStateDescriptor<any>
  | MapStateDescriptor<any, any>
  | ReducingStateDescriptor<any>
  | AggregatingStateDescriptor<any, any, any>;
