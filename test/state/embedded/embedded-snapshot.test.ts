/**
 * Embedded snapshots: copy-on-write isolation (writes after the sync part never reach the
 * snapshot), incremental chains restored from every retained checkpoint, restores across backends
 * and parallelisms.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointId } from '../../../src/core/ids.ts';
import { SeededRandom } from '../../../src/core/time.ts';
import { ValueStateDescriptor } from '../../../src/state/descriptors.ts';
import type { KeyedStateBackend } from '../../../src/state/backend.ts';
import { keyGroupRangeForSubtask, type Key } from '../../../src/state/key-groups.ts';
import type { ValueState } from '../../../src/state/state.ts';
import type { EmbeddedKeyedSnapshot } from '../../../src/state/embedded/embedded-snapshot.ts';
import type { IncrementalKeyGroupsStateHandle } from '../../../src/state/handles/incremental.ts';
import { keyedHandleSizes, type KeyedStateHandle } from '../../../src/state/handles/registry.ts';
import { streamSize } from '../../../src/storage/handles.ts';
import { allStates, disposeAll, dump, embedded, fill, heap, keys, M, MapStreams, randomOp, setKey, snapshotNow } from './fixtures.ts';

afterEach(disposeAll);

const incrementalOf = (handles: readonly KeyedStateHandle[]): IncrementalKeyGroupsStateHandle => {
  expect(handles).toHaveLength(1);
  expect(handles[0]!.type).toBe('incremental-key-groups');
  return handles[0] as IncrementalKeyGroupsStateHandle;
};

async function restoredEmbedded(handles: readonly KeyedStateHandle[], streams: MapStreams, options = {}): Promise<KeyedStateBackend> {
  const b = embedded({ cacheEntriesMax: 10, ...options });
  await b.restore(handles, streams.read);
  return b;
}

async function restoredHeap(handles: readonly KeyedStateHandle[], streams: MapStreams): Promise<KeyedStateBackend> {
  const b = heap();
  await b.restore(handles, streams.read);
  return b;
}

describe('embedded snapshots: copy-on-write isolation', () => {
  for (const incremental of [false, true]) {
    it(`${incremental ? 'incremental' : 'full'}: records written between the async part's steps never reach the snapshot`, async () => {
      const streams = new MapStreams();
      // Steps of 7 entries and a cache of 20: the async part pauses dozens of times, and the writes
      // made in its pauses evict to the store the snapshot is reading.
      const e = embedded({ cacheEntriesMax: 20, incremental, snapshotEntriesPerStep: 7 });
      const model = heap();
      const r = new SeededRandom(11);
      for (let id = 1; id <= 5; id++) {
        for (let i = 0; i < 400; i++) randomOp(r, [e, model], 150);
        const runner = e.snapshot(checkpointId(id), streams.factory(id));
        const expected = structuredClone(dump(model));
        let pauses = 0;
        const handles = await runner.run(async () => {
          pauses++;
          for (let i = 0; i < 20; i++) randomOp(r, [e, model], 300);
        });
        expect(pauses).toBeGreaterThan(3);
        expect(dump(await restoredHeap(handles, streams))).toEqual(expected);
        expect(dump(await restoredEmbedded(handles, streams))).toEqual(expected);
        e.notifyCheckpointComplete(checkpointId(id));
      }
      // The backend itself still holds what was written during the pauses.
      expect(dump(e)).toEqual(dump(model));
    });
  }

  for (const incremental of [false, true]) {
    it(`${incremental ? 'base' : 'full'}: keys of every type, cached, stored, both or deleted in the cache, each written once with the cache's value`, async () => {
      const streams = new MapStreams();
      // Key bytes of different lengths and msgpack types interleave in the store's order.
      const mixed: Key[] = [];
      for (let i = 0; i < 60; i++) mixed.push(i, -i - 1, i * 1000003, i + 0.5, `k${i}`, `${'long-'.repeat(8)}${i}`, BigInt(i) * 10n ** 12n);
      const e = embedded({ cacheEntriesMax: 50, incremental });
      const model = new Map<Key, number>();
      const v = e.getState<ValueState<number>>(new ValueStateDescriptor('v'));
      const r = new SeededRandom(5);
      // Every key written, most evicted to the store; then a random fifth rewritten or deleted in the cache.
      for (const k of mixed) {
        setKey(e, k);
        v.update(1);
        model.set(k, 1);
      }
      for (let i = 0; i < mixed.length / 5; i++) {
        const k = mixed[r.int(mixed.length)]!;
        setKey(e, k);
        if (r.int(3) === 0) {
          v.clear();
          model.delete(k);
        } else {
          v.update(2 + i);
          model.set(k, 2 + i);
        }
      }
      expect(e.cachedEntries).toBeGreaterThan(20);
      const h = await restoredHeap(await snapshotNow(e, streams, 1), streams);
      const restored = h.entries('v') as Array<[Key, number]>;
      expect(restored).toHaveLength(model.size);
      expect(new Map(restored)).toEqual(model);
    });
  }

  it('a snapshot aborted while its async part pauses fails with CHECKPOINT_FAILED and releases its captures', async () => {
    const streams = new MapStreams();
    const e = embedded({ cacheEntriesMax: 20, incremental: false, snapshotEntriesPerStep: 5 });
    fill(e, keys(100));
    const runner = e.snapshot(checkpointId(1), streams.factory(1));
    await expect(runner.run(async () => e.notifyCheckpointAborted(checkpointId(1)))).rejects.toMatchObject({
      code: 'CHECKPOINT_FAILED',
      message: expect.stringContaining('during its async part'),
    });
    expect(streams.writes).toHaveLength(0);
    // Nothing pins the cache any more: a later checkpoint runs and restores the current state.
    fill(e, keys(100), 1);
    const restored = heap();
    await restored.restore(await snapshotNow(e, streams, 2), streams.read);
    expect(dump(restored)).toEqual(dump(e));
  });

  it('a delta reads a key the store overwrote after the sync part as it was at the sync part', async () => {
    const streams = new MapStreams();
    const e = embedded({ cacheEntriesMax: 4 });
    const v = e.getState<ValueState<number>>(new ValueStateDescriptor('v'));
    const write = (k: number, n: number) => {
      setKey(e, k);
      v.update(n);
    };
    for (let k = 0; k < 50; k++) write(k, k);
    await snapshotNow(e, streams, 1);
    e.notifyCheckpointComplete(checkpointId(1));
    for (let k = 0; k < 50; k++) write(k, 1000 + k); // evicted to the store, so read from it by the delta
    const runner = e.snapshot(checkpointId(2), streams.factory(2));
    for (let round = 0; round < 3; round++) for (let k = 0; k < 50; k++) write(k, -1); // overwrites the store again
    const restored = await restoredHeap(await runner.run(), streams);
    expect(new Map(restored.entries('v'))).toEqual(new Map(Array.from({ length: 50 }, (_, k) => [k, 1000 + k])));
  });

  for (const incremental of [false, true]) {
    it(`${incremental ? 'base' : 'full'}: holds no store reader across its pauses, so evictions during it do not grow the store file`, async () => {
      // A reader held through the async part kept lmdb from reusing pages: with it, this grew the
      // file from 0.9 MB to 190 MB (BENCHMARKS.md, state (g)). Now the snapshot reads in chunks and
      // the evictions keep pre-images of the keys it has yet to read.
      const streams = new MapStreams();
      const e = embedded({ cacheEntriesMax: 1000, incremental, snapshotEntriesPerStep: 200 });
      const model = heap();
      const r = new SeededRandom(3);
      const write = (k: number, n: number) => {
        for (const b of [e, model]) {
          setKey(b, k);
          b.getState<ValueState<number>>(new ValueStateDescriptor('v')).update(n);
        }
      };
      for (let k = 0; k < 20_000; k++) write(k, k);
      const runner = e.snapshot(checkpointId(1), streams.factory(1));
      const expected = new Map(model.entries('v'));
      const fileBytes = () => statSync(join(e.directory, 'data.mdb')).size;
      const before = fileBytes();
      let pauses = 0;
      let preImagesMax = 0;
      const handles = await runner.run(async () => {
        pauses++;
        preImagesMax = Math.max(preImagesMax, (runner as EmbeddedKeyedSnapshot).preImageCount);
        for (let i = 0; i < 2000; i++) write(r.int(20_000), -i);
      });
      expect(pauses).toBeGreaterThan(50);
      expect(preImagesMax).toBeGreaterThan(0);
      expect(fileBytes()).toBeLessThan(before + 4 * 1024 * 1024);
      expect(new Map((await restoredHeap(handles, streams)).entries('v'))).toEqual(expected);
    });
  }

  it('a snapshot that never ran releases its captures: later writes need no copies', async () => {
    const streams = new MapStreams();
    const e = embedded();
    fill(e, keys(100));
    e.snapshot(checkpointId(1), streams.factory(1));
    e.notifyCheckpointAborted(checkpointId(1));
    await expect(e.snapshot(checkpointId(2), streams.factory(2)).run()).resolves.toHaveLength(1);
    const dead = e.snapshot(checkpointId(3), streams.factory(3));
    e.notifyCheckpointAborted(checkpointId(3));
    await expect(dead.run()).rejects.toThrow(/aborted or disposed/);
  });
});

describe('embedded snapshots: formats and scopes', () => {
  it('full checkpoints (incremental off) write one exclusive stream the heap backend reads', async () => {
    const streams = new MapStreams();
    const e = embedded({ incremental: false });
    fill(e, keys(200));
    const handles = await snapshotNow(e, streams, 1);
    expect(handles.map((h) => h.type)).toEqual(['key-groups']);
    expect(streams.writes.map((w) => w.scope)).toEqual(['exclusive']);
    expect(dump(await restoredHeap(handles, streams))).toEqual(dump(e));
  });

  it('a savepoint is a full exclusive snapshot even when checkpoints are incremental, and never a base to extend', async () => {
    const streams = new MapStreams();
    const e = embedded();
    fill(e, keys(200));
    await snapshotNow(e, streams, 1);
    e.notifyCheckpointComplete(checkpointId(1));
    const sp = await e.snapshot(checkpointId(2), streams.factory(2), { kind: 'savepoint' }).run();
    expect(sp.map((h) => h.type)).toEqual(['key-groups']);
    e.notifyCheckpointComplete(checkpointId(2)); // stop-with-savepoint notifies it
    fill(e, keys(5), 1);
    const next = incrementalOf(await snapshotNow(e, streams, 3));
    expect(next.files.map((f) => [f.kind, f.checkpointId])).toEqual([
      ['base', 1],
      ['delta', 3],
    ]);
  });

  it('an empty backend reports an empty chain', async () => {
    const streams = new MapStreams();
    const e = embedded();
    allStates(e);
    const h = incrementalOf(await snapshotNow(e, streams, 1));
    expect(h.files).toEqual([]);
    expect(streams.writes).toEqual([]);
  });
});

describe('incremental chains', () => {
  it('20 checkpoints with updates and deletes, some aborted, some notices lost: every retained one restores its exact state', async () => {
    const streams = new MapStreams();
    const e = embedded({ cacheEntriesMax: 40, incrementsShareMax: 1.5 });
    const model = heap();
    /** The value state as a plain Map, beside the heap model of every state kind. */
    const plain = new Map<Key, number>();
    const value = e.getState<ValueState<number>>(new ValueStateDescriptor('plain'));
    const r = new SeededRandom(11);
    const retained: Array<{ id: number; handles: KeyedStateHandle[]; expected: ReturnType<typeof dump>; plain: Map<Key, number> }> = [];
    for (let id = 1; id <= 20; id++) {
      for (let i = 0; i < 300; i++) {
        randomOp(r, [e, model], 400);
        const k = `p${r.int(200)}`;
        setKey(e, k);
        if (r.int(4) === 0) {
          value.clear();
          plain.delete(k);
        } else {
          value.update(i);
          plain.set(k, i);
        }
      }
      const runner = e.snapshot(checkpointId(id), streams.factory(id));
      const expected = structuredClone(dump(model));
      const plainAtSync = new Map(plain);
      for (let i = 0; i < 100; i++) randomOp(r, [e, model], 400);
      const handles = await runner.run();
      if (id % 7 === 3) {
        e.notifyCheckpointAborted(checkpointId(id));
        continue;
      }
      retained.push({ id, handles, expected, plain: plainAtSync });
      if (id % 5 !== 4) e.notifyCheckpointComplete(checkpointId(id)); // every fifth notice is lost
    }
    const kinds = retained.map((c) =>
      incrementalOf(c.handles)
        .files.map((f) => f.kind)
        .join(''),
    );
    expect(kinds.some((k) => k.includes('delta'))).toBe(true);
    expect(kinds.filter((k) => k === 'base').length).toBeGreaterThan(1); // the chain restarted
    for (const c of retained) {
      const h = await restoredHeap(c.handles, streams);
      expect(dump(h), `checkpoint ${c.id} into heap`).toEqual(c.expected);
      const eb = await restoredEmbedded(c.handles, streams);
      expect(dump(eb), `checkpoint ${c.id} into embedded`).toEqual(c.expected);
      expect(new Map(eb.entries('plain') as Array<[Key, number]>)).toEqual(c.plain);
      expect(eb.keyCounts()).toEqual(h.keyCounts());
    }
  });

  it('persists only what changed: 1% of keys changed is a delta of about 1% of the base', async () => {
    const streams = new MapStreams();
    const e = embedded({ cacheEntriesMax: 500 });
    const v = e.getState<ValueState<string>>(new ValueStateDescriptor('v'));
    for (let k = 0; k < 10_000; k++) {
      setKey(e, k);
      v.update(`value-${k}-${'x'.repeat(90)}`);
    }
    const base = incrementalOf(await snapshotNow(e, streams, 1));
    e.notifyCheckpointComplete(checkpointId(1));
    for (let k = 0; k < 10_000; k += 100) {
      setKey(e, k);
      v.update(`changed-${k}-${'y'.repeat(90)}`);
    }
    const delta = incrementalOf(await snapshotNow(e, streams, 2));
    const baseSizes = keyedHandleSizes(base);
    const deltaSizes = keyedHandleSizes(delta);
    expect(deltaSizes.persistedBytes / baseSizes.persistedBytes).toBeLessThan(0.02);
    expect(deltaSizes.stateBytes).toBe(baseSizes.stateBytes + deltaSizes.persistedBytes);
    expect(delta.files[0]).toEqual(base.files[0]); // reused, not rewritten
    expect(delta.keyCounts).toEqual({ v: 10_000 });
  });

  it('writes a new base once the increments pass the share of the base', async () => {
    const streams = new MapStreams();
    const e = embedded({ incrementsShareMax: 0.3 });
    fill(e, keys(100));
    const lengths: number[] = [];
    for (let id = 1; id <= 12; id++) {
      fill(e, keys(10, `round${id}`), id);
      const h = incrementalOf(await snapshotNow(e, streams, id));
      lengths.push(h.files.length);
      // The increments before the newest stay within the share (the newest is planned from an estimate).
      const sizes = h.files.map((f) => streamSize(f.stream));
      const older = sizes.slice(1, -1).reduce((a, b) => a + b, 0);
      expect(older).toBeLessThanOrEqual(0.3 * sizes[0]!);
      e.notifyCheckpointComplete(checkpointId(id));
    }
    expect(lengths.filter((n) => n === 1).length).toBeGreaterThan(1);
  });

  it('a backend restored at the same parallelism extends the restored chain; told firstCheckpointFull, it writes a base', async () => {
    const streams = new MapStreams();
    const e = embedded();
    fill(e, keys(100));
    const h1 = incrementalOf(await snapshotNow(e, streams, 1));
    const extending = embedded();
    await extending.restore([h1], streams.read);
    fill(extending, keys(3), 9);
    const h2 = incrementalOf(await snapshotNow(extending, streams, 2));
    expect(h2.files.map((f) => [f.kind, f.checkpointId])).toEqual([
      ['base', 1],
      ['delta', 2],
    ]);
    expect(h2.knownCompletedCheckpointId).toBe(1);
    const full = embedded();
    await full.restore([h1], streams.read, { firstCheckpointFull: true });
    const h3 = incrementalOf(await snapshotNow(full, streams, 3));
    expect(h3.files.map((f) => [f.kind, f.checkpointId])).toEqual([['base', 3]]);
    expect(h3.knownCompletedCheckpointId).toBeNull();
  });
});

describe('incremental chains: the change tracker outlasts a base', () => {
  // A cache of 2,000 entries: the tracker follows up to 16,000 changed keys (eight times the
  // cache); before 2026-12-05 it followed 10,000 (twice the cache, at least 10,000) and gave up.
  const changedWhileBaseRuns = async (changed: number): Promise<string[]> => {
    const streams = new MapStreams();
    const e = embedded({ cacheEntriesMax: 2000 });
    const v = e.getState<ValueState<number>>(new ValueStateDescriptor('v'));
    const ks = keys(40_000);
    for (const [i, k] of ks.entries()) {
      setKey(e, k);
      v.update(i);
    }
    // The base's sync part, then updates while its async part has yet to run: they are the next
    // snapshot's changes.
    const base = e.snapshot(checkpointId(1), streams.factory(1));
    for (let i = 0; i < changed; i++) {
      setKey(e, ks[i]!);
      v.update(-i - 1);
    }
    expect(incrementalOf(await base.run()).files.map((f) => f.kind)).toEqual(['base']);
    e.notifyCheckpointComplete(checkpointId(1));
    const next = incrementalOf(await snapshotNow(e, streams, 2));
    const restored = await restoredHeap([next], streams);
    const rv = restored.getState<ValueState<number>>(new ValueStateDescriptor('v'));
    for (const i of [0, changed - 1, changed, 39_999]) {
      setKey(restored, ks[i]!);
      expect(rv.value()).toBe(i < changed ? -i - 1 : i);
    }
    return next.files.map((f) => f.kind);
  };

  it('14,000 keys changed while a base is written (past twice the cache): the next snapshot is a delta', async () => {
    expect(await changedWhileBaseRuns(14_000)).toEqual(['base', 'delta']);
  });

  it('17,000 keys changed (past eight times the cache): the tracker gives up and the next snapshot is a base', async () => {
    expect(await changedWhileBaseRuns(17_000)).toEqual(['base']);
  });
});

describe('restore across backends and parallelisms', () => {
  it('heap -> embedded and embedded -> heap', async () => {
    const streams = new MapStreams();
    const h = heap();
    fill(h, keys(300));
    const fromHeap = await h.snapshot(checkpointId(1), streams.factory(1)).run();
    const e = await restoredEmbedded(fromHeap, streams);
    expect(dump(e)).toEqual(dump(h));
    expect(e.keyCounts()).toEqual(h.keyCounts());
    fill(e, keys(50), 3);
    fill(h, keys(50), 3);
    const fromEmbedded = await snapshotNow(e, streams, 2); // a base: heap handles are no chain
    expect(incrementalOf(fromEmbedded).files.map((f) => f.kind)).toEqual(['base']);
    expect(dump(await restoredHeap(fromEmbedded, streams))).toEqual(dump(h));
  });

  it('rescale 1 -> 3 from an incremental chain: every key lands in exactly one subtask, and each writes a new base', async () => {
    const streams = new MapStreams();
    const e = embedded({ cacheEntriesMax: 50 });
    const model = heap();
    fill(e, keys(400));
    fill(model, keys(400));
    await snapshotNow(e, streams, 1);
    e.notifyCheckpointComplete(checkpointId(1));
    const r = new SeededRandom(5);
    for (let i = 0; i < 500; i++) randomOp(r, [e, model], 500);
    const chain = await snapshotNow(e, streams, 2);
    expect(incrementalOf(chain).files.map((f) => f.kind)).toEqual(['base', 'delta']);
    const parts = [];
    for (let i = 0; i < 3; i++) {
      const range = keyGroupRangeForSubtask(M, 3, i);
      const b = embedded({}, range, i);
      await b.restore(chain, streams.read);
      parts.push(b);
    }
    const merged: Record<string, Array<[Key, unknown]>> = {};
    for (const [name, entries] of Object.entries(dump(model))) {
      merged[name] = parts.flatMap((b) => b.entries(name)).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
      expect(merged[name], name).toEqual(entries);
    }
    const next = incrementalOf(await snapshotNow(parts[1]!, streams, 3));
    expect(next.files.map((f) => [f.kind, f.checkpointId])).toEqual([['base', 3]]);
    expect(next.range).toEqual(keyGroupRangeForSubtask(M, 3, 1));
  });
});
