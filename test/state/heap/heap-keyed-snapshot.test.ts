import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../../src/core/assert.ts';
import { RestoreError, StorageError, WeirError } from '../../../src/core/errors.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import { ListStateDescriptor } from '../../../src/state/descriptors.ts';
import type { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { assignToKeyGroup, keyGroupRangeForSubtask, rangeContains, type Key } from '../../../src/state/key-groups.ts';
import { keyedHandlesForRange } from '../../../src/state/redistribute.ts';
import type { ListState } from '../../../src/state/state.ts';
import type { KeyGroupsStateHandle } from '../../../src/state/handles/key-groups.ts';
import { InlineStreams, inlineReader } from '../helpers.ts';
import { allStates, dump, fill, keyedBackend, M, setKey, STATE_NAMES } from './fixtures.ts';

const keys = (n: number, prefix = 'key'): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

async function snapshotNow(b: HeapKeyedStateBackend, id = 1): Promise<KeyGroupsStateHandle[]> {
  return b.snapshot(checkpointId(id), new InlineStreams(id)).run();
}

async function restored(handles: readonly KeyGroupsStateHandle[], range = { start: 0, end: M - 1 }): Promise<HeapKeyedStateBackend> {
  const b = keyedBackend(range);
  await b.restore(handles, inlineReader());
  return b;
}

describe('heap keyed snapshots: format', () => {
  it('writes nothing for a backend without keys', async () => {
    const b = keyedBackend();
    allStates(b);
    const streams = new InlineStreams();
    expect(await b.snapshot(checkpointId(1), streams).run()).toEqual([]);
    expect(streams.writes).toEqual([]);
  });

  it('writes one exclusive stream with ascending per-key-group offsets and key counts', async () => {
    const b = keyedBackend({ start: 0, end: 63 }, 1);
    const ks = keys(500).filter((k) => assignToKeyGroup(k, M) <= 63);
    fill(b, ks);
    const streams = new InlineStreams(3);
    const runner = b.snapshot(checkpointId(3), streams);
    expect(runner.syncInfo.stateBytesEstimate).toBeGreaterThan(0);
    const [handle, ...rest] = await runner.run();
    if (!handle) throw new Error('a backend with keys wrote no snapshot handle');
    expect(rest).toEqual([]);
    expect(streams.writes).toEqual([{ scope: 'exclusive', nameHint: 'keyed-op-1', bytes: expect.any(Number) }]);
    expect(handle.range).toEqual({ start: 0, end: 63 });
    expect(handle.keyCounts).toEqual({ value: ks.length, list: ks.length, map: ks.length, sum: ks.length, avg: ks.length });
    const groups = handle.offsets.map(([kg]) => kg);
    expect(groups).toEqual([...new Set(ks.map((k) => assignToKeyGroup(k, M)))].sort((a, b) => a - b));
    for (let i = 1; i < handle.offsets.length; i++) {
      const [, prevOffset, prevLength] = handle.offsets[i - 1]!;
      expect(handle.offsets[i]![1]).toBe(prevOffset + prevLength);
    }
  });
});

describe('heap keyed snapshots: copy-on-write', () => {
  it('mutates in place again once no snapshot holds the state', async () => {
    const b = keyedBackend();
    const list = b.getState<ListState<number>>(new ListStateDescriptor('l'));
    setKey(b, 'k');
    list.add(1);
    const runner = b.snapshot(checkpointId(1), new InlineStreams());
    const captured = list.get();
    list.add(2);
    expect(captured).toEqual([1]);
    const copy = list.get();
    expect(copy).not.toBe(captured);
    list.add(3);
    expect(list.get()).toBe(copy); // owned since the snapshot: no second copy
    await runner.run();
    list.add(4);
    expect(list.get()).toBe(copy);
    expect(copy).toEqual([1, 2, 3, 4]);
  });

  it('refuses to run a snapshot after it was aborted, and runs only once', async () => {
    const b = keyedBackend();
    fill(b, keys(10));
    const aborted = b.snapshot(checkpointId(1), new InlineStreams());
    b.notifyCheckpointAborted(checkpointId(1));
    await expect(aborted.run()).rejects.toThrow(WeirError);
    const ok = b.snapshot(checkpointId(2), new InlineStreams());
    await ok.run();
    await expect(ok.run()).rejects.toThrow(AssertionError);
    const subsumed = b.snapshot(checkpointId(3), new InlineStreams());
    b.notifyCheckpointComplete(checkpointId(4));
    await expect(subsumed.run()).rejects.toThrow(/aborted/);
  });
});

describe('heap keyed snapshots: restore at another parallelism', () => {
  it('3 -> 2: merges handles and reads only those that intersect', async () => {
    const ks = keys(3000);
    const sources = [0, 1, 2].map((i) => keyedBackend(keyGroupRangeForSubtask(M, 3, i), i));
    for (const src of sources)
      fill(
        src,
        ks.filter((k) => rangeContains(src.keyGroupRange, assignToKeyGroup(k, M))),
      );
    const expected: Record<string, Array<[Key, unknown]>> = {};
    for (const src of sources) for (const [name, entries] of Object.entries(dump(src))) (expected[name] ??= []).push(...entries);
    const all = (await Promise.all(sources.map((s) => snapshotNow(s)))).flat();
    expect(all).toHaveLength(3);
    const merged: Record<string, Array<[Key, unknown]>> = {};
    for (let i = 0; i < 2; i++) {
      const range = keyGroupRangeForSubtask(M, 2, i);
      const reader = inlineReader();
      const target = keyedBackend(range, i);
      await target.restore(all, reader);
      expect(reader.reads).toBe(keyedHandlesForRange(all, range).length);
      for (const [name, entries] of Object.entries(dump(target))) (merged[name] ??= []).push(...entries);
    }
    for (const name of STATE_NAMES) {
      expect(merged[name]).toHaveLength(ks.length);
      expect(new Map(merged[name])).toEqual(new Map(expected[name]));
    }
  });
});

describe('heap keyed snapshots: restore checks', () => {
  async function oneHandle(): Promise<KeyGroupsStateHandle> {
    const b = keyedBackend();
    fill(b, keys(200));
    const [handle] = await snapshotNow(b);
    if (!handle) throw new Error('a backend with 200 keys wrote no snapshot handle');
    return handle;
  }

  const withData = (h: KeyGroupsStateHandle, data: Uint8Array): KeyGroupsStateHandle => ({ ...h, stream: { type: 'inline', data, checksum: 0 } });
  const bytesOf = (h: KeyGroupsStateHandle): Uint8Array => (h.stream.type === 'inline' ? h.stream.data.slice() : new Uint8Array());

  it('decodes only the key groups it owns', async () => {
    const h = await oneHandle();
    const data = bytesOf(h);
    const last = h.offsets.at(-1);
    if (!last) throw new Error('the snapshot has no key group offsets');
    data.fill(0xff, last[1], last[1] + last[2]);
    const corrupt = withData(h, data);
    const low = { start: 0, end: last[0] - 1 };
    await expect(restored([corrupt], low)).resolves.toBeDefined();
    await expect(restored([corrupt], { start: last[0], end: 127 })).rejects.toThrow(StorageError);
  });

  it('rejects a bad header and an unknown format version', async () => {
    const h = await oneHandle();
    const bad = bytesOf(h);
    bad[0] = 0;
    await expect(restored([withData(h, bad)])).rejects.toMatchObject({ code: 'CORRUPT_FILE' });
    const future = bytesOf(h);
    future[3] = 99;
    await expect(restored([withData(h, future)])).rejects.toMatchObject({ code: 'UNSUPPORTED_VERSION' });
  });

  it('rejects offsets that do not match the stream', async () => {
    const h = await oneHandle();
    const shifted = { ...h, offsets: h.offsets.map(([kg, off, len]) => [kg, off + 1, len] as const) };
    await expect(restored([shifted])).rejects.toThrow(StorageError);
    const [first, second] = h.offsets;
    if (!first || !second) throw new Error('the snapshot has fewer than two key groups');
    const swapped = { ...h, offsets: [[second[0], first[1], first[2]] as const] };
    await expect(restored([swapped])).rejects.toThrow(StorageError);
    const outside = { ...h, offsets: [[500, first[1], first[2]] as const] };
    await expect(restored([outside])).rejects.toThrow(StorageError);
  });

  it('rejects a snapshot taken with another maxParallelism', async () => {
    const h = await oneHandle();
    const b = keyedBackend({ start: 0, end: 255 }, 0, 256);
    await expect(b.restore([h], inlineReader())).rejects.toThrow(RestoreError);
  });

  it('rejects a state whose kind differs from the registered one', async () => {
    const h = await oneHandle();
    const b = keyedBackend();
    b.getState(new ListStateDescriptor('value'));
    await expect(b.restore([h], inlineReader())).rejects.toThrow(RestoreError);
    const c = await restored([h]);
    expect(() => c.getState(new ListStateDescriptor('value'))).toThrow(/restored as value state/);
  });
});
