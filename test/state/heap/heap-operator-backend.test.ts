import { describe, expect, it } from 'vitest';
import { ConfigError, RestoreError, StorageError } from '../../../src/core/errors.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import { ListStateDescriptor } from '../../../src/state/descriptors.ts';
import { HeapStateBackendFactory } from '../../../src/state/heap/heap-backend-factory.ts';
import { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { HeapOperatorStateBackend } from '../../../src/state/heap/heap-operator-backend.ts';
import type { OperatorStateHandle } from '../../../src/storage/handles.ts';
import { InlineStreams, inlineReader } from '../helpers.ts';

const offsets = new ListStateDescriptor<number>('offsets');
const splits = new ListStateDescriptor<string>('splits');

function backend(subtask = 0): HeapOperatorStateBackend {
  return new HeapOperatorStateBackend({ uid: 'src', subtask });
}

async function snapshotOf(b: HeapOperatorStateBackend, id = 1): Promise<OperatorStateHandle | null> {
  return b.snapshot(checkpointId(id), new InlineStreams(id)).run();
}

/** Old subtask i holds split entries `s{i}.{j}` and union entries `u{i}.{j}`. */
async function oldHandles(counts: readonly number[]): Promise<Array<OperatorStateHandle | null>> {
  return Promise.all(
    counts.map(async (n, i) => {
      const b = backend(i);
      b.getListState(splits).update(Array.from({ length: n }, (_, j) => `s${i}.${j}`));
      b.getUnionListState(offsets).update(Array.from({ length: n }, (_, j) => i * 100 + j));
      return snapshotOf(b);
    }),
  );
}

async function restoreAll(handles: ReadonlyArray<OperatorStateHandle | null>, parallelism: number): Promise<HeapOperatorStateBackend[]> {
  return Promise.all(
    Array.from({ length: parallelism }, async (_, i) => {
      const b = backend(i);
      await b.restoreRedistributed(handles, inlineReader(), i, parallelism);
      return b;
    }),
  );
}

describe('HeapOperatorStateBackend', () => {
  it('list semantics, one object per name', () => {
    const b = backend();
    const s = b.getListState(splits);
    expect(b.getListState(new ListStateDescriptor<string>('splits'))).toBe(s);
    expect(s.get()).toEqual([]);
    s.add('a');
    s.addAll(['b', 'c']);
    expect(s.get()).toEqual(['a', 'b', 'c']);
    s.update(['z']);
    expect(s.get()).toEqual(['z']);
    s.clear();
    expect(s.get()).toEqual([]);
  });

  it('rejects one name as both split and union', () => {
    const b = backend();
    b.getListState(splits);
    expect(() => b.getUnionListState(splits)).toThrow(ConfigError);
    expect(() => b.getUnionListState(splits)).toThrow(/splits/);
  });

  it('returns no handle without states, and one exclusive stream with them', async () => {
    const b = backend(2);
    expect(await snapshotOf(b)).toBeNull();
    b.getListState(splits).add('x');
    b.getUnionListState(offsets);
    const streams = new InlineStreams(5);
    const handle = await b.snapshot(checkpointId(5), streams).run();
    expect(streams.writes).toEqual([{ scope: 'exclusive', nameHint: 'operator-src-2', bytes: expect.any(Number) }]);
    expect(handle!.states).toEqual([
      { name: 'splits', mode: 'split', count: 1 },
      { name: 'offsets', mode: 'union', count: 0 },
    ]);
  });

  it('snapshots the lists as they were at the sync part', async () => {
    const b = backend();
    const s = b.getListState(splits);
    s.addAll(['a', 'b']);
    const runner = b.snapshot(checkpointId(1), new InlineStreams());
    s.add('late');
    s.update(['replaced']);
    const restored = backend();
    await restored.restore([(await runner.run())!], inlineReader());
    expect(restored.getListState(splits).get()).toEqual(['a', 'b']);
    expect(s.get()).toEqual(['replaced']);
  });

  it('restore appends the given handles in order', async () => {
    const [h0, h1] = await oldHandles([2, 1]);
    const b = backend();
    b.getListState(splits).add('own');
    await b.restore([h1!, h0!], inlineReader());
    expect(b.getListState(splits).get()).toEqual(['own', 's1.0', 's0.0', 's0.1']);
    expect(b.getUnionListState(offsets).get()).toEqual([100, 0, 1]);
  });

  it('redistributes 3 -> 2: split dealt in contiguous chunks, union to everyone', async () => {
    const restored = await restoreAll(await oldHandles([2, 1, 2]), 2);
    expect(restored.map((b) => b.getListState(splits).get())).toEqual([
      ['s0.0', 's0.1', 's1.0'],
      ['s2.0', 's2.1'],
    ]);
    for (const b of restored) expect(b.getUnionListState(offsets).get()).toEqual([0, 1, 100, 200, 201]);
  });

  it('redistributes 2 -> 5, some subtasks getting no split entries', async () => {
    const restored = await restoreAll(await oldHandles([2, 1]), 5);
    expect(restored.map((b) => b.getListState(splits).get())).toEqual([['s0.0'], ['s0.1'], ['s1.0'], [], []]);
    for (const b of restored) expect(b.getUnionListState(offsets).get()).toEqual([0, 1, 100]);
  });

  it('keeps each subtask its own split entries at unchanged parallelism, and tolerates null handles', async () => {
    const handles = [...(await oldHandles([3, 0])), null];
    const restored = await restoreAll(handles, 3);
    expect(restored.map((b) => b.getListState(splits).get())).toEqual([['s0.0', 's0.1', 's0.2'], [], []]);
    for (const b of restored) expect(b.getUnionListState(offsets).get()).toEqual([0, 1, 2]);
  });

  it('rejects a stream that does not match its handle, and mode conflicts', async () => {
    const [h] = await oldHandles([2]);
    const unionEntry = h?.states[1];
    if (!h || !unionEntry) throw new Error('oldHandles built no handle with two states');
    const lying: OperatorStateHandle = { ...h, states: [{ name: 'splits', mode: 'split', count: 5 }, unionEntry] };
    await expect(backend().restore([lying], inlineReader())).rejects.toThrow(StorageError);
    const b = backend();
    b.getUnionListState(splits);
    await expect(b.restore([h], inlineReader())).rejects.toThrow(RestoreError);
    const data = h.stream.type === 'inline' ? h.stream.data.slice() : new Uint8Array();
    data[3] = 2;
    await expect(backend().restore([{ ...h, stream: { type: 'inline', data, checksum: 0 } }], inlineReader())).rejects.toMatchObject({
      code: 'UNSUPPORTED_VERSION',
    });
  });
});

describe('HeapStateBackendFactory', () => {
  it('is named heap and creates heap backends', () => {
    const f = new HeapStateBackendFactory();
    expect(f.name).toBe('heap');
    expect(f.createKeyedBackend({ uid: 'u', subtask: 0, keyGroupRange: { start: 0, end: 9 }, maxParallelism: 10 })).toBeInstanceOf(HeapKeyedStateBackend);
    expect(f.createOperatorBackend({ uid: 'u', subtask: 0 })).toBeInstanceOf(HeapOperatorStateBackend);
  });
});
