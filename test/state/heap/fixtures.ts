/** Shared set-up for heap backend tests: backends over a range, descriptors of every kind. */
import { keyGroup } from '../../../src/core/ids.ts';
import {
  AggregatingStateDescriptor,
  ListStateDescriptor,
  MapStateDescriptor,
  ReducingStateDescriptor,
  ValueStateDescriptor,
} from '../../../src/state/descriptors.ts';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup, type Key, type KeyGroupRange } from '../../../src/state/key-groups.ts';
import type { AggregatingState, ListState, MapState, ReducingState, ValueState } from '../../../src/state/state.ts';

export const M = 128;

export function keyedBackend(range: KeyGroupRange = { start: 0, end: M - 1 }, subtask = 0, maxParallelism = M): HeapKeyedStateBackend {
  return new HeapKeyedStateBackend({ uid: 'op', subtask, keyGroupRange: range, maxParallelism });
}

export function setKey(backend: HeapKeyedStateBackend, key: Key): void {
  backend.setCurrentKey(key, keyGroup(assignToKeyGroup(key, backend.maxParallelism)));
}

/** An average whose accumulator `add` mutates in place, as many real aggregate functions do. */
export const average = {
  createAccumulator: () => ({ sum: 0, count: 0 }),
  add(value: number, acc: { sum: number; count: number }) {
    acc.sum += value;
    acc.count += 1;
    return acc;
  },
  getResult: (acc: { sum: number; count: number }) => acc.sum / acc.count,
};

export const descriptors = {
  value: new ValueStateDescriptor<number>('value'),
  list: new ListStateDescriptor<string>('list'),
  map: new MapStateDescriptor<string | number, number>('map'),
  reducing: new ReducingStateDescriptor<number>('sum', (a, b) => a + b),
  aggregating: new AggregatingStateDescriptor('avg', average),
};

export interface AllStates {
  value: ValueState<number>;
  list: ListState<string>;
  map: MapState<string | number, number>;
  reducing: ReducingState<number>;
  aggregating: AggregatingState<number, number>;
}

export function allStates(backend: HeapKeyedStateBackend): AllStates {
  return {
    value: backend.getState(descriptors.value),
    list: backend.getState(descriptors.list),
    map: backend.getState(descriptors.map),
    reducing: backend.getState(descriptors.reducing),
    aggregating: backend.getState(descriptors.aggregating),
  };
}

export const STATE_NAMES = ['value', 'list', 'map', 'sum', 'avg'] as const;

/** Every state's entries, sorted by key, for comparing whole backends. */
export function dump(backend: HeapKeyedStateBackend): Record<string, Array<[Key, unknown]>> {
  const out: Record<string, Array<[Key, unknown]>> = {};
  for (const name of STATE_NAMES) {
    out[name] = backend.entries(name).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
  }
  return out;
}

/** Fills every state for `keys` deterministically. */
export function fill(backend: HeapKeyedStateBackend, keys: readonly Key[]): void {
  const s = allStates(backend);
  keys.forEach((key, i) => {
    setKey(backend, key);
    s.value.update(i);
    s.list.add(`a${i}`);
    if (i % 2 === 0) s.list.add(`b${i}`);
    s.map.put('x', i);
    s.map.put(i % 7, i * 2);
    s.reducing.add(i);
    s.reducing.add(1);
    s.aggregating.add(i);
    s.aggregating.add(i + 2);
  });
}
