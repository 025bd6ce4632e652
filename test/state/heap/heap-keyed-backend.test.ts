import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../../src/core/assert.ts';
import { ConfigError } from '../../../src/core/errors.ts';
import { keyGroup } from '../../../src/core/ids.ts';
import type { StateChangeListener } from '../../../src/state/backend.ts';
import { ListStateDescriptor, ValueStateDescriptor } from '../../../src/state/descriptors.ts';
import { assignToKeyGroup } from '../../../src/state/key-groups.ts';
import type { ValueState } from '../../../src/state/state.ts';
import { allStates, descriptors, keyedBackend, setKey } from './fixtures.ts';

describe('HeapKeyedStateBackend: value state', () => {
  it('reads the default when absent, scopes values to the current key, clears', () => {
    const b = keyedBackend();
    const s = b.getState<ValueState<number>>(new ValueStateDescriptor('v', 7));
    setKey(b, 'a');
    expect(s.value()).toBe(7);
    s.update(1);
    setKey(b, 'b');
    expect(s.value()).toBe(7);
    s.update(2);
    setKey(b, 'a');
    expect(s.value()).toBe(1);
    expect(b.keyCounts()).toEqual({ v: 2 });
    s.clear();
    expect(s.value()).toBe(7);
    expect(b.keyCounts()).toEqual({ v: 1 });
    setKey(b, 'b');
    s.update(undefined as unknown as number);
    expect(b.keyCounts()).toEqual({ v: 0 });
  });

  it('stores null, and keeps keys of different types apart', () => {
    const b = keyedBackend();
    const s = b.getState<ValueState<unknown>>(new ValueStateDescriptor('v'));
    setKey(b, 1);
    s.update(null);
    setKey(b, 1n);
    expect(s.value()).toBeUndefined();
    s.update('big');
    setKey(b, '1');
    s.update('str');
    setKey(b, true);
    s.update('bool');
    setKey(b, 1);
    expect(s.value()).toBeNull();
    expect(b.keyCounts()).toEqual({ v: 4 });
  });
});

describe('HeapKeyedStateBackend: list state', () => {
  it('adds, adds all, updates and clears; empty removes the key', () => {
    const b = keyedBackend();
    const { list } = allStates(b);
    setKey(b, 'k');
    expect(list.get()).toEqual([]);
    list.add('a');
    list.addAll(['b', 'c']);
    list.addAll([]);
    expect(list.get()).toEqual(['a', 'b', 'c']);
    const input = ['x', 'y'];
    list.update(input);
    input.push('z');
    expect(list.get()).toEqual(['x', 'y']);
    list.update([]);
    expect(list.get()).toEqual([]);
    expect(b.keyCounts().list).toBe(0);
    list.add('q');
    list.clear();
    expect(b.keyCounts().list).toBe(0);
  });
});

describe('HeapKeyedStateBackend: map state', () => {
  it('puts, gets, removes, iterates; removing the last entry removes the key', () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    setKey(b, 'k');
    expect(map.isEmpty()).toBe(true);
    expect([...map.entries()]).toEqual([]);
    map.put('a', 1);
    map.put(2, 20);
    map.put('a', 10);
    expect(map.get('a')).toBe(10);
    expect(map.get(2)).toBe(20);
    expect(map.get('2')).toBeUndefined();
    expect(map.contains(2)).toBe(true);
    expect([...map.entries()]).toEqual([
      ['a', 10],
      [2, 20],
    ]);
    expect([...map.keys()]).toEqual(['a', 2]);
    expect([...map.values()]).toEqual([10, 20]);
    expect(map.isEmpty()).toBe(false);
    map.remove('missing');
    map.remove('a');
    expect([...map.keys()]).toEqual([2]);
    map.remove(2);
    expect(map.isEmpty()).toBe(true);
    expect(b.keyCounts().map).toBe(0);
    map.put('z', 1);
    setKey(b, 'other');
    expect(map.isEmpty()).toBe(true);
    setKey(b, 'k');
    map.clear();
    expect(b.keyCounts().map).toBe(0);
  });
});

describe('HeapKeyedStateBackend: reducing and aggregating state', () => {
  it('reduces added values per key', () => {
    const b = keyedBackend();
    const { reducing } = allStates(b);
    setKey(b, 'k');
    expect(reducing.get()).toBeUndefined();
    reducing.add(3);
    reducing.add(4);
    expect(reducing.get()).toBe(7);
    setKey(b, 'j');
    reducing.add(1);
    expect(reducing.get()).toBe(1);
    reducing.clear();
    expect(reducing.get()).toBeUndefined();
    setKey(b, 'k');
    expect(reducing.get()).toBe(7);
  });

  it('aggregates through the accumulator', () => {
    const b = keyedBackend();
    const { aggregating } = allStates(b);
    setKey(b, 'k');
    expect(aggregating.get()).toBeUndefined();
    aggregating.add(2);
    aggregating.add(4);
    expect(aggregating.get()).toBe(3);
    expect(b.entries('avg')).toEqual([['k', { sum: 6, count: 2 }]]);
    aggregating.clear();
    expect(aggregating.get()).toBeUndefined();
  });
});

describe('HeapKeyedStateBackend: registration and keys', () => {
  it('returns one object per descriptor name', () => {
    const b = keyedBackend();
    expect(b.getState(descriptors.value)).toBe(b.getState(new ValueStateDescriptor('value')));
  });

  it('rejects a name re-registered with another kind, naming the state', () => {
    const b = keyedBackend();
    b.getState(new ValueStateDescriptor('counts'));
    expect(() => b.getState(new ListStateDescriptor('counts'))).toThrow(ConfigError);
    expect(() => b.getState(new ListStateDescriptor('counts'))).toThrow(/counts.*value.*list/);
    expect(() => b.getState(new ValueStateDescriptor('__proto__'))).toThrow(ConfigError);
  });

  it('asserts that the key group lies in the range, and that a key was set before writing', () => {
    const b = keyedBackend({ start: 10, end: 20 });
    expect(() => b.getCurrentKey()).toThrow(AssertionError);
    const s = b.getState<ValueState<number>>(descriptors.value);
    expect(() => s.update(1)).toThrow(AssertionError);
    expect(() => b.setCurrentKey('x', keyGroup(21))).toThrow(AssertionError);
    expect(() => b.setCurrentKey('x', keyGroup(9))).toThrow(AssertionError);
    b.setCurrentKey('x', keyGroup(20));
    expect(b.getCurrentKey()).toBe('x');
  });

  it('asserts a valid range at construction', () => {
    expect(() => keyedBackend({ start: 0, end: 128 })).toThrow(AssertionError);
    expect(() => keyedBackend({ start: 5, end: 4 })).toThrow(AssertionError);
  });

  it('entries() returns copies', () => {
    const b = keyedBackend();
    const { list, map } = allStates(b);
    setKey(b, 'k');
    list.add('a');
    map.put('m', 1);
    (b.entries('list')[0]![1] as string[]).push('oops');
    (b.entries('map')[0]![1] as Map<string, number>).set('oops', 2);
    expect(list.get()).toEqual(['a']);
    expect(map.contains('oops')).toBe(false);
    expect(b.entries('unknown')).toEqual([]);
  });
});

describe('HeapKeyedStateBackend: change listener', () => {
  it('reports every mutation with state, key group and key', () => {
    const b = keyedBackend();
    const s = allStates(b);
    const events: unknown[][] = [];
    const listener: StateChangeListener = { onChange: (...args) => void events.push(args) };
    b.setChangeListener(listener);
    setKey(b, 'k');
    const kg = assignToKeyGroup('k', 128);
    s.value.update(1);
    s.value.clear();
    s.value.clear(); // absent: no event
    s.list.add('a');
    s.list.addAll(['b', 'c']);
    s.list.update(['z']);
    s.list.clear();
    s.map.put('m', 1);
    s.map.remove('absent'); // no event
    s.map.remove('m');
    s.reducing.add(2);
    s.reducing.add(3);
    s.aggregating.add(4);
    expect(events).toEqual([
      ['value', kg, 'k', 'set', 1],
      ['value', kg, 'k', 'clear', undefined],
      ['list', kg, 'k', 'append', 'a'],
      ['list', kg, 'k', 'append', 'b'],
      ['list', kg, 'k', 'append', 'c'],
      ['list', kg, 'k', 'set', ['z']],
      ['list', kg, 'k', 'clear', undefined],
      ['map', kg, 'k', 'mapPut', 1, 'm'],
      ['map', kg, 'k', 'mapRemove', undefined, 'm'],
      ['sum', kg, 'k', 'set', 2],
      ['sum', kg, 'k', 'set', 5],
      ['avg', kg, 'k', 'set', { sum: 4, count: 1 }],
    ]);
    b.setChangeListener(null);
    s.value.update(9);
    expect(events).toHaveLength(12);
  });
});

describe('HeapKeyedStateBackend: dispose', () => {
  it('drops all state', () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    b.dispose();
    expect(b.keyCounts()).toEqual({});
  });
});
