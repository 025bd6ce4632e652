/**
 * The heap map state keeps the current key's inner map between calls, and reducing/aggregating
 * states skip the store when the function mutated the stored object in place. These tests check
 * that neither is observable: key switches, snapshots taken between two calls with the same key,
 * restores, clears and the change listener see exactly what they saw without the shortcuts.
 */
import { describe, expect, it } from 'vitest';
import { checkpointId } from '../../../src/core/ids.ts';
import { MapStateDescriptor } from '../../../src/state/descriptors.ts';
import type { StateChangeListener } from '../../../src/state/backend.ts';
import type { MapState } from '../../../src/state/state.ts';
import type { KeyGroupsStateHandle } from '../../../src/state/handles/key-groups.ts';
import { InlineStreams, inlineReader } from '../helpers.ts';
import { assignToKeyGroup } from '../../../src/state/key-groups.ts';
import { allStates, keyedBackend, M, setKey } from './fixtures.ts';

type Changes = Array<[string, string, unknown, unknown]>;

function recordingListener(into: Changes): StateChangeListener {
  return { onChange: (name, _kg, key, op, value, mapKey) => void into.push([name, `${String(key)}:${op}`, mapKey, value]) };
}

describe('heap map state: the current key resolved once', () => {
  it('follows key switches, including back to a key whose map was created meanwhile', () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    setKey(b, 'a');
    expect(map.isEmpty()).toBe(true);
    map.put('x', 1);
    setKey(b, 'b');
    expect(map.get('x')).toBeUndefined();
    map.put('x', 2);
    setKey(b, 'a');
    expect(map.get('x')).toBe(1);
    map.put('y', 3);
    setKey(b, 'b');
    expect([...map.entries()]).toEqual([['x', 2]]);
    setKey(b, 'a');
    expect([...map.entries()]).toEqual([
      ['x', 1],
      ['y', 3],
    ]);
  });

  it('an equal key built afresh (another string object) finds the same map', () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    const parts = ['ke', 'y'];
    setKey(b, parts.join(''));
    map.put('n', 1);
    setKey(b, 'other');
    setKey(b, [parts[0], parts[1]].join(''));
    expect(map.get('n')).toBe(1);
    setKey(b, 7);
    map.put('n', 2);
    setKey(b, 7.0);
    expect(map.get('n')).toBe(2);
  });

  it('a snapshot taken between two writes of the same key keeps the value it captured', async () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    setKey(b, 'k');
    map.put('x', 1);
    // No setCurrentKey between the snapshot and the next writes: the cached map must not be written in place.
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    map.put('x', 2);
    map.put('y', 9);
    map.remove('x');
    const handles = await runner.run();
    const restored = keyedBackend();
    await restored.restore(handles, inlineReader());
    expect(restored.entries('map')).toEqual([['k', new Map([['x', 1]])]]);
    expect(b.entries('map')).toEqual([['k', new Map([['y', 9]])]]);
  });

  it('a key read while a snapshot is live is copied, not written in place, on its first write', async () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    setKey(b, 'k');
    map.put('x', 1);
    map.put('y', 1);
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    setKey(b, 'k');
    expect(map.get('x')).toBe(1); // resolved from the pinned key-group map
    map.put('x', 2);
    map.remove('y');
    setKey(b, 'k');
    expect(map.get('y')).toBeUndefined(); // resolved from the copy
    map.remove('x'); // the last entry: the key goes
    const restored = keyedBackend();
    await restored.restore(await runner.run(), inlineReader());
    expect(restored.entries('map')).toEqual([
      [
        'k',
        new Map([
          ['x', 1],
          ['y', 1],
        ]),
      ],
    ]);
    expect(b.entries('map')).toEqual([]);
  });

  it('a key read from a copied key-group map is still copied on its first write while a snapshot is live', async () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    const group = assignToKeyGroup('a', M);
    const other = Array.from({ length: 5000 }, (_, i) => `b${i}`).find((k) => assignToKeyGroup(k, M) === group);
    if (other === undefined) throw new Error('no second key in the key group of "a"');
    setKey(b, 'a');
    map.put('x', 1);
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    setKey(b, other);
    map.put('y', 2); // replaces the pinned key-group map by an unpinned copy that holds a's (shared) inner map
    setKey(b, 'a');
    expect(map.get('x')).toBe(1);
    map.put('x', 3);
    const restored = keyedBackend();
    await restored.restore(await runner.run(), inlineReader());
    expect(restored.entries('map')).toEqual([['a', new Map([['x', 1]])]]);
    setKey(b, 'a');
    expect(map.get('x')).toBe(3);
  });

  it('removing the last entry removes the key; the next put starts a new map', async () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    setKey(b, 'k');
    map.put('x', 1);
    map.remove('x');
    expect(map.isEmpty()).toBe(true);
    expect(b.keyCounts().map).toBe(0);
    map.put('z', 5);
    expect(b.entries('map')).toEqual([['k', new Map([['z', 5]])]]);
    map.clear();
    expect(map.get('z')).toBeUndefined();
    map.put('w', 6);
    expect(b.entries('map')).toEqual([['k', new Map([['w', 6]])]]);
  });

  it('a restore replaces what the state object resolved before it', async () => {
    const source = keyedBackend();
    const sourceMap = allStates(source).map;
    setKey(source, 'k');
    sourceMap.put('x', 42);
    const handles: KeyGroupsStateHandle[] = await source.snapshot(checkpointId(1), new InlineStreams(1)).run();

    const b = keyedBackend();
    const map = b.getState<MapState<string, number>>(new MapStateDescriptor('map'));
    setKey(b, 'k');
    expect(map.get('x')).toBeUndefined(); // resolves "no map for k" before the restore
    await b.restore(handles, inlineReader());
    expect(map.get('x')).toBe(42);
    map.put('y', 1);
    expect(b.entries('map')).toEqual([
      [
        'k',
        new Map([
          ['x', 42],
          ['y', 1],
        ]),
      ],
    ]);
  });

  it('reports every put and remove to the change listener', () => {
    const b = keyedBackend();
    const { map } = allStates(b);
    const changes: Changes = [];
    b.setChangeListener(recordingListener(changes));
    setKey(b, 'k');
    map.put('x', 1);
    map.put('x', 2);
    map.remove('x');
    map.remove('x');
    expect(changes).toEqual([
      ['map', 'k:mapPut', 'x', 1],
      ['map', 'k:mapPut', 'x', 2],
      ['map', 'k:mapRemove', 'x', undefined],
    ]);
  });
});

describe('heap aggregating and reducing state: in-place results', () => {
  it('an accumulator mutated in place while a snapshot is live leaves the snapshot its value', async () => {
    const b = keyedBackend();
    const { aggregating } = allStates(b);
    setKey(b, 'k');
    aggregating.add(2);
    aggregating.add(4);
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    aggregating.add(12); // copies (the snapshot sees the accumulator) ...
    aggregating.add(2); // ... then mutates the copy in place, without storing it again
    expect(aggregating.get()).toBe(5);
    const restored = keyedBackend();
    await restored.restore(await runner.run(), inlineReader());
    setKey(restored, 'k');
    expect(allStates(restored).aggregating.get()).toBe(3);
    expect(b.entries('avg')).toEqual([['k', { sum: 20, count: 4 }]]);
  });

  it('still reports a set for every add, stored again or not', () => {
    const b = keyedBackend();
    const { aggregating, reducing } = allStates(b);
    const changes: Changes = [];
    b.setChangeListener(recordingListener(changes));
    setKey(b, 'k');
    aggregating.add(1);
    aggregating.add(3);
    reducing.add(5);
    reducing.add(0); // 5 + 0 === 5: the stored value, not stored again
    expect(changes).toEqual([
      ['avg', 'k:set', undefined, { sum: 4, count: 2 }],
      ['avg', 'k:set', undefined, { sum: 4, count: 2 }],
      ['sum', 'k:set', undefined, 5],
      ['sum', 'k:set', undefined, 5],
    ]);
    expect(reducing.get()).toBe(5);
  });
});
