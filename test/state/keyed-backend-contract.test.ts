/**
 * What every keyed state backend must do, run over each of them: the heap backend, and the
 * embedded (lmdb) backend with full and with incremental checkpoints (its cache kept small, so
 * state lives in the store and not only in the cache). The state API of every state kind per key
 * and per namespace (windows keep a namespace as a map state key), the keys of every key group of
 * its range, snapshots restored into a fresh backend, at the same and at other parallelisms, from
 * handles any backend wrote, deletions carried through an incremental chain, snapshot isolation
 * (writes after the sync part never reach the snapshot), aborted checkpoints, savepoints and
 * disposal. Neither backend has state TTL, so there is nothing of it to check.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AssertionError } from '../../src/core/assert.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { checkpointId, keyGroup } from '../../src/core/ids.ts';
import { SeededRandom } from '../../src/core/time.ts';
import type { KeyedStateBackend } from '../../src/state/backend.ts';
import { ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor } from '../../src/state/descriptors.ts';
import { keyedStreamsOf, type KeyedStateHandle } from '../../src/state/handles/registry.ts';
import { assignToKeyGroup, keyGroupRangeForSubtask, rangeContains, type Key, type KeyGroupRange } from '../../src/state/key-groups.ts';
import type { MapState, ValueState } from '../../src/state/state.ts';
import { allStates, disposeAll, dump, embedded, FULL, fill, heap, keys, M, MapStreams, randomOp, setKey, STATE_NAMES } from './embedded/fixtures.ts';
import { descriptors } from './heap/fixtures.ts';

afterEach(disposeAll);

interface BackendCase {
  readonly name: string;
  make(range?: KeyGroupRange, subtask?: number): KeyedStateBackend;
  /** Its checkpoints extend a chain of shared files (a base and increments). */
  readonly chains: boolean;
}

const CASES: readonly BackendCase[] = [
  { name: 'heap', make: (range = FULL, subtask = 0) => heap(range, subtask), chains: false },
  {
    name: 'embedded, full checkpoints',
    make: (range = FULL, subtask = 0) => embedded({ incremental: false, cacheEntriesMax: 20 }, range, subtask),
    chains: false,
  },
  {
    name: 'embedded, incremental checkpoints',
    make: (range = FULL, subtask = 0) => embedded({ incremental: true, cacheEntriesMax: 20 }, range, subtask),
    chains: true,
  },
];

/** A completed checkpoint: sync part, async part, then the completion notice. */
async function checkpoint(b: KeyedStateBackend, streams: MapStreams, id: number): Promise<KeyedStateHandle[]> {
  const handles = await b.snapshot(checkpointId(id), streams.factory(id)).run();
  b.notifyCheckpointComplete(checkpointId(id));
  return handles;
}

/** Every entry of every state, sorted by key, with only the keys whose key group lies in `range`. */
function dumpIn(b: KeyedStateBackend, range: KeyGroupRange): Record<string, Array<[Key, unknown]>> {
  const out: Record<string, Array<[Key, unknown]>> = {};
  for (const [name, entries] of Object.entries(dump(b))) out[name] = entries.filter(([k]) => rangeContains(range, assignToKeyGroup(k, M)));
  return out;
}

/** The entries of several backends merged, in `dump`'s order. */
function dumpAll(parts: readonly KeyedStateBackend[]): Record<string, Array<[Key, unknown]>> {
  const out: Record<string, Array<[Key, unknown]>> = {};
  for (const name of STATE_NAMES) {
    out[name] = parts.flatMap((b) => b.entries(name)).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
  }
  return out;
}

describe.each(CASES)('keyed backend contract: $name', (c) => {
  async function restored(handles: readonly KeyedStateHandle[], streams: MapStreams, range: KeyGroupRange = FULL, subtask = 0): Promise<KeyedStateBackend> {
    const b = c.make(range, subtask);
    await b.restore(handles, streams.read);
    return b;
  }

  describe('state API', () => {
    it('value: the default when absent, scoped to the current key, null stored, clear and update(undefined) remove the key', () => {
      const b = c.make();
      const s = b.getState<ValueState<unknown>>(new ValueStateDescriptor('v', 7));
      setKey(b, 'a');
      expect(s.value()).toBe(7);
      s.update(1);
      setKey(b, 'b');
      expect(s.value()).toBe(7);
      s.update(null);
      expect(s.value()).toBeNull();
      setKey(b, 'a');
      expect(s.value()).toBe(1);
      expect(b.keyCounts()).toEqual({ v: 2 });
      s.clear();
      expect(s.value()).toBe(7);
      expect(b.keyCounts()).toEqual({ v: 1 });
      setKey(b, 'b');
      s.update(undefined);
      expect(b.keyCounts()).toEqual({ v: 0 });
    });

    it('keys of different types stay apart: 1, 1n, "1", true', () => {
      const b = c.make();
      const s = b.getState<ValueState<string>>(new ValueStateDescriptor('v'));
      const ks: Key[] = [1, 1n, '1', true];
      ks.forEach((k, i) => {
        setKey(b, k);
        s.update(`v${i}`);
      });
      ks.forEach((k, i) => {
        setKey(b, k);
        expect(s.value()).toBe(`v${i}`);
      });
      expect(b.keyCounts()).toEqual({ v: 4 });
    });

    it('list: add, addAll, update (a copy of its input), clear; an empty list removes the key', () => {
      const b = c.make();
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
      expect(b.keyCounts().list).toBe(1);
      list.clear();
      expect(b.keyCounts().list).toBe(0);
    });

    it('map: put, get, contains, remove, entries/keys/values in insertion order; removing the last entry removes the key', () => {
      const b = c.make();
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

    it('reducing and aggregating: per key, through the function, cleared apart', () => {
      const b = c.make();
      const { reducing, aggregating } = allStates(b);
      setKey(b, 'k');
      expect(reducing.get()).toBeUndefined();
      expect(aggregating.get()).toBeUndefined();
      reducing.add(3);
      reducing.add(4);
      aggregating.add(2);
      aggregating.add(4);
      expect(reducing.get()).toBe(7);
      expect(aggregating.get()).toBe(3);
      expect(b.entries('avg')).toEqual([['k', { sum: 6, count: 2 }]]);
      setKey(b, 'j');
      reducing.add(1);
      expect(reducing.get()).toBe(1);
      reducing.clear();
      expect(reducing.get()).toBeUndefined();
      setKey(b, 'k');
      expect(reducing.get()).toBe(7);
      aggregating.clear();
      expect(aggregating.get()).toBeUndefined();
      expect(b.keyCounts()).toMatchObject({ sum: 1, avg: 0 });
    });

    it('namespaces (map keys, as windows keep them) stay apart per key and survive a restore', async () => {
      const b = c.make();
      const contents = b.getState<MapState<string, number[]>>(new MapStateDescriptor<string, number[]>('window-contents'));
      for (const k of ['a', 'b']) {
        setKey(b, k);
        contents.put('0:10', [k === 'a' ? 1 : 2]);
        contents.put('10:20', [3]);
      }
      setKey(b, 'a');
      contents.remove('10:20');
      contents.put('0:10', [...(contents.get('0:10') ?? []), 4]);
      const expected = [
        ['a', new Map([['0:10', [1, 4]]])],
        [
          'b',
          new Map([
            ['0:10', [2]],
            ['10:20', [3]],
          ]),
        ],
      ];
      expect(dump(b, ['window-contents'])['window-contents']).toEqual(expected);
      const streams = new MapStreams();
      const back = await restored(await checkpoint(b, streams, 1), streams);
      expect(dump(back, ['window-contents'])['window-contents']).toEqual(expected);
    });

    it('one state object per name; a name asked for as another kind is a ConfigError naming it', () => {
      const b = c.make();
      expect(b.getState(descriptors.value)).toBe(b.getState(new ValueStateDescriptor('value')));
      b.getState(new ValueStateDescriptor('counts'));
      expect(() => b.getState(new ListStateDescriptor('counts'))).toThrow(ConfigError);
      expect(() => b.getState(new ListStateDescriptor('counts'))).toThrow(/counts.*value.*list/);
      expect(() => b.getState(new ValueStateDescriptor('__proto__'))).toThrow(ConfigError);
    });

    it('entries() returns copies: changing them leaves the state as it was', () => {
      const b = c.make();
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

  describe('key groups', () => {
    const RANGE: KeyGroupRange = { start: 40, end: 87 };

    /** One key or more in every key group of RANGE, and none outside it. */
    function keysCovering(range: KeyGroupRange): string[] {
      const out: string[] = [];
      const covered = new Set<number>();
      for (let i = 0; covered.size < range.end - range.start + 1; i++) {
        const k = `g${i}`;
        const kg = assignToKeyGroup(k, M);
        if (!rangeContains(range, kg)) continue;
        covered.add(kg);
        out.push(k);
      }
      return out;
    }

    it('holds keys of every key group of its range, and lists exactly them', () => {
      const b = c.make(RANGE, 1);
      const ks = keysCovering(RANGE);
      fill(b, ks);
      expect(new Set(b.entries('value').map(([k]) => k))).toEqual(new Set(ks));
      expect(b.keyCounts().value).toBe(ks.length);
      const s = b.getState<ValueState<number>>(descriptors.value);
      ks.forEach((k, i) => {
        setKey(b, k);
        expect(s.value()).toBe(i);
      });
    });

    it('asserts on a key group outside its range and on a write before any key was set', () => {
      const b = c.make(RANGE, 1);
      const s = b.getState<ValueState<number>>(descriptors.value);
      expect(() => b.getCurrentKey()).toThrow(AssertionError);
      expect(() => s.update(1)).toThrow(AssertionError);
      expect(() => b.setCurrentKey('x', keyGroup(RANGE.start - 1))).toThrow(AssertionError);
      expect(() => b.setCurrentKey('x', keyGroup(RANGE.end + 1))).toThrow(AssertionError);
      b.setCurrentKey('x', keyGroup(RANGE.end));
      expect(b.getCurrentKey()).toBe('x');
      expect(b.getCurrentKeyGroup()).toBe(RANGE.end);
    });
  });

  describe('snapshot and restore', () => {
    it('a fresh backend restored from a snapshot holds the same state: every kind, unusual keys and values', async () => {
      const b = c.make();
      fill(b, keys(300));
      const odd = b.getState<ValueState<unknown>>(new ValueStateDescriptor('odd'));
      const oddKeys: Key[] = [0, -1, 1.5, 1, 1n, 2n ** 70n, -(2n ** 64n), true, false, '', '日本'];
      for (const k of oddKeys) {
        setKey(b, k);
        odd.update({ k: typeof k, big: 2n ** 65n, bin: new Uint8Array([1, 2]), nested: [null, { x: -0.5 }] });
      }
      const streams = new MapStreams();
      const back = await restored(await checkpoint(b, streams, 1), streams);
      expect(dump(back, [...STATE_NAMES, 'odd'])).toEqual(dump(b, [...STATE_NAMES, 'odd']));
      expect(back.keyCounts()).toEqual(b.keyCounts());
      setKey(back, 1n);
      const value = back.getState<ValueState<{ k: string; bin: Uint8Array }>>(new ValueStateDescriptor('odd')).value();
      expect(value?.k).toBe('bigint');
      expect(value?.bin.constructor).toBe(Uint8Array);
    });

    it('an empty backend restores to an empty backend', async () => {
      const b = c.make();
      allStates(b);
      const streams = new MapStreams();
      const back = await restored(await checkpoint(b, streams, 1), streams);
      for (const name of STATE_NAMES) expect(back.entries(name)).toEqual([]);
      expect(Object.values(back.keyCounts()).every((n) => n === 0)).toBe(true);
    });

    it('rescale 1 -> 3 -> 2: each backend holds exactly the keys of its key-group range, and together all of them', async () => {
      const streams = new MapStreams();
      const b = c.make();
      fill(b, keys(600));
      /** Restores `handles` at `parallelism`, checks every part, and checkpoints the parts as checkpoint `id`. */
      const rescale = async (handles: readonly KeyedStateHandle[], parallelism: number, id: number): Promise<KeyedStateHandle[]> => {
        const parts: KeyedStateBackend[] = [];
        for (let i = 0; i < parallelism; i++) {
          const range = keyGroupRangeForSubtask(M, parallelism, i);
          const part = await restored(handles, streams, range, i);
          expect(dump(part), `subtask ${i} of ${parallelism}`).toEqual(dumpIn(b, range));
          parts.push(part);
        }
        expect(dumpAll(parts)).toEqual(dump(b));
        return (await Promise.all(parts.map((p) => checkpoint(p, streams, id)))).flat();
      };
      await rescale(await rescale(await checkpoint(b, streams, 1), 3, 2), 2, 3);
    });

    it('deletions survive a chain of checkpoints: a key deleted after a checkpoint stays deleted in every later one', async () => {
      const streams = new MapStreams();
      const b = c.make();
      const model = heap();
      fill(b, keys(200));
      fill(model, keys(200));
      let handles = await checkpoint(b, streams, 1);
      for (let id = 2; id <= 4; id++) {
        for (const target of [b, model]) {
          const s = allStates(target);
          for (let i = id * 10; i < id * 10 + 8; i++) {
            setKey(target, `key-${i}`);
            s.value.clear();
            s.list.update([]);
            s.map.clear();
            s.reducing.clear();
            s.aggregating.clear();
          }
          setKey(target, `key-${id}`);
          s.map.remove('x');
          s.value.update(-id);
        }
        handles = await checkpoint(b, streams, id);
      }
      if (c.chains) {
        expect(handles).toHaveLength(1);
        expect(keyedStreamsOf(handles[0]!)).toHaveLength(4); // a base and three increments
      }
      const back = await restored(handles, streams);
      expect(dump(back)).toEqual(dump(model));
      expect(back.keyCounts()).toEqual(model.keyCounts());
      expect(back.entries('value').some(([k]) => k === 'key-20')).toBe(false);
    });

    it('isolation: what is written after the sync part (updates in place, deletions, new keys) never reaches the snapshot', async () => {
      const streams = new MapStreams();
      const b = c.make();
      const model = heap();
      const r = new SeededRandom(3);
      for (let id = 1; id <= 5; id++) {
        for (let i = 0; i < 400; i++) randomOp(r, [b, model], 150);
        const runner = b.snapshot(checkpointId(id), streams.factory(id));
        const expected = structuredClone(dump(model));
        for (let i = 0; i < 400; i++) randomOp(r, [b, model], 300);
        const handles = await runner.run();
        for (const reader of CASES) {
          const back = reader.make();
          await back.restore(handles, streams.read);
          expect(dump(back), `checkpoint ${id} into ${reader.name}`).toEqual(expected);
        }
        b.notifyCheckpointComplete(checkpointId(id));
      }
      expect(dump(b)).toEqual(dump(model));
    });

    it('two snapshots in flight each keep their own sync part, run in either order', async () => {
      const streams = new MapStreams();
      const b = c.make();
      fill(b, keys(100));
      const first = b.snapshot(checkpointId(1), streams.factory(1));
      const atFirst = structuredClone(dump(b));
      fill(b, keys(100), 1);
      const second = b.snapshot(checkpointId(2), streams.factory(2));
      const atSecond = structuredClone(dump(b));
      fill(b, keys(100), 2);
      const secondHandles = await second.run();
      const firstHandles = await first.run();
      expect(dump(await restored(firstHandles, streams))).toEqual(atFirst);
      expect(dump(await restored(secondHandles, streams))).toEqual(atSecond);
    });

    it('an aborted checkpoint fails with CHECKPOINT_FAILED if it had not run, and loses nothing: the next one holds every change', async () => {
      const streams = new MapStreams();
      const b = c.make();
      fill(b, keys(100));
      await checkpoint(b, streams, 1);
      fill(b, keys(30), 1);
      const ran = await b.snapshot(checkpointId(2), streams.factory(2)).run();
      expect(ran.length).toBeGreaterThan(0);
      b.notifyCheckpointAborted(checkpointId(2));
      fill(b, keys(20, 'late'), 2);
      const dead = b.snapshot(checkpointId(3), streams.factory(3));
      b.notifyCheckpointAborted(checkpointId(3));
      await expect(dead.run()).rejects.toMatchObject({ code: 'CHECKPOINT_FAILED' });
      fill(b, keys(10), 3);
      const back = await restored(await checkpoint(b, streams, 4), streams);
      expect(dump(back)).toEqual(dump(b));
    });

    it('a savepoint refers only to files it wrote itself, and restores', async () => {
      const streams = new MapStreams();
      const b = c.make();
      fill(b, keys(200));
      await checkpoint(b, streams, 1);
      fill(b, keys(20), 1);
      await checkpoint(b, streams, 2);
      const savepoint = await b.snapshot(checkpointId(3), streams.factory(3), { kind: 'savepoint' }).run();
      const written = new Set(streams.writes.filter((w) => w.checkpointId === 3).map((w) => w.name));
      const referenced = savepoint.flatMap(keyedStreamsOf).map((s) => (s.type === 'file' ? s.path : 'inline'));
      expect(referenced.length).toBeGreaterThan(0);
      for (const p of referenced) expect(written.has(p), p).toBe(true);
      expect(dump(await restored(savepoint, streams))).toEqual(dump(b));
    });

    it('restores handles written by every backend', async () => {
      for (const writer of CASES) {
        const streams = new MapStreams();
        const w = writer.make();
        fill(w, keys(150));
        await checkpoint(w, streams, 1);
        for (let i = 0; i < 5; i++) {
          setKey(w, `key-${i}`);
          allStates(w).value.clear();
        }
        const handles = await checkpoint(w, streams, 2);
        expect(dump(await restored(handles, streams)), `from ${writer.name}`).toEqual(dump(w));
        const half = keyGroupRangeForSubtask(M, 2, 1);
        expect(dump(await restored(handles, streams, half, 1)), `from ${writer.name}, half the key groups`).toEqual(dumpIn(w, half));
      }
    });
  });

  describe('disposal', () => {
    it('drops all state, fails a snapshot that had not run yet, and may be called again', async () => {
      const streams = new MapStreams();
      const b = c.make();
      fill(b, keys(50));
      const pending = b.snapshot(checkpointId(1), streams.factory(1));
      b.dispose();
      await expect(pending.run()).rejects.toMatchObject({ code: 'CHECKPOINT_FAILED' });
      expect(b.keyCounts()).toEqual({});
      expect(() => b.dispose()).not.toThrow();
      expect(streams.writes).toEqual([]);
    });
  });
});
