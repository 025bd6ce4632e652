/**
 * What only the heap backend shows: its range check at construction and the exact change events
 * it reports. The state API, key groups, snapshots and disposal every keyed backend shares are in
 * test/state/keyed-backend-contract.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../../src/core/assert.ts';
import type { StateChangeListener } from '../../../src/state/backend.ts';
import { assignToKeyGroup } from '../../../src/state/key-groups.ts';
import { allStates, keyedBackend, setKey } from './fixtures.ts';

describe('HeapKeyedStateBackend: construction', () => {
  it('asserts a valid range', () => {
    expect(() => keyedBackend({ start: 0, end: 128 })).toThrow(AssertionError);
    expect(() => keyedBackend({ start: 5, end: 4 })).toThrow(AssertionError);
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
