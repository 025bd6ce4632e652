import { describe, expect, it } from 'vitest';
import { ValueStateDescriptor } from '../../../src/index.ts';
import { StorageError } from '../../../src/core/errors.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import type { KeyedStateBackend } from '../../../src/state/backend.ts';
import type { ChangelogKeyedStateBackend } from '../../../src/state/changelog/changelog-keyed-backend.ts';
import type { ChangelogStateHandle } from '../../../src/state/handles/changelog.ts';
import type { KeyedStateHandle } from '../../../src/state/handles/registry.ts';
import type { ListState, MapState, ReducingState, ValueState, AggregatingState } from '../../../src/state/state.ts';
import { InlineStreams, inlineReader } from '../helpers.ts';
import { descriptors, keyedBackend, M, setKey } from '../heap/fixtures.ts';
import { disposeAll, embedded } from '../embedded/fixtures.ts';
import { changelogOver, ManualTime, SegmentStreams } from './fixtures.ts';

/** Applies a deterministic mix of every kind of change for `keys` keys, round `round`. */
function mutate(b: KeyedStateBackend, keys: number, round: number): void {
  const value = b.getState<ValueState<number>>(descriptors.value);
  const list = b.getState<ListState<string>>(descriptors.list);
  const map = b.getState<MapState<string | number, number>>(descriptors.map);
  const sum = b.getState<ReducingState<number>>(descriptors.reducing);
  const avg = b.getState<AggregatingState<number, number>>(descriptors.aggregating);
  for (let k = 0; k < keys; k++) {
    setKey(b as never, `k${k}`);
    if ((k + round) % 5 === 0) value.clear();
    else value.update(k * 10 + round);
    list.add(`r${round}`);
    if (round % 3 === 2) list.update([`reset${round}`]);
    map.put(round % 4, k);
    if (round % 2 === 1) map.remove((round + 1) % 4);
    sum.add(k);
    avg.add(round);
    if ((k + round) % 7 === 0) map.clear();
  }
}

/** Every state's entries, sorted, for comparing two backends. */
function contents(b: KeyedStateBackend): Record<string, Array<[unknown, unknown]>> {
  const out: Record<string, Array<[unknown, unknown]>> = {};
  for (const name of ['value', 'list', 'map', 'sum', 'avg']) {
    out[name] = b
      .entries(name)
      .map(([k, v]): [unknown, unknown] => [k, v instanceof Map ? [...v].sort() : v])
      .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
  }
  return out;
}

async function checkpoint(b: ChangelogKeyedStateBackend, id: number): Promise<ChangelogStateHandle> {
  const handles = await b.snapshot(checkpointId(id), new InlineStreams(id)).run();
  expect(handles).toHaveLength(1);
  expect(handles[0]!.type).toBe('changelog');
  return handles[0] as ChangelogStateHandle;
}

async function restoredHeap(handles: readonly KeyedStateHandle[], range = { start: 0, end: M - 1 }): Promise<KeyedStateBackend> {
  const b = keyedBackend(range);
  for (const d of Object.values(descriptors)) b.getState(d);
  await b.restore(handles, inlineReader());
  return b;
}

describe('changelog keyed backend over heap', () => {
  it('checkpoints as a log range and restores every kind of change by replay', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams);
    mutate(live, 40, 0);
    await time.advance(5);
    mutate(live, 40, 1);
    const h1 = await checkpoint(live, 1);
    expect(h1.materialization.handles).toEqual([]);
    expect(h1.segments.length).toBeGreaterThan(1); // the size threshold cut batches before the checkpoint
    expect(streams.writes.every((w) => w.scope === 'shared')).toBe(true);
    expect(contents(await restoredHeap([h1]))).toEqual(contents(live));
    mutate(live, 40, 2);
    const h2 = await checkpoint(live, 2);
    expect(h2.segments.slice(0, h1.segments.length)).toEqual(h1.segments); // reused, not uploaded again
    expect(contents(await restoredHeap([h2]))).toEqual(contents(live));
    // Into the embedded backend too, which takes a whole-value set's logged bytes as they are.
    try {
      const into = embedded();
      for (const d of Object.values(descriptors)) into.getState(d);
      await into.restore([h2], inlineReader());
      expect(contents(into)).toEqual(contents(live));
    } finally {
      disposeAll();
    }
    // The earlier handle still restores the earlier state.
    const back = await restoredHeap([h1]);
    expect(contents(back).value).not.toEqual(contents(live).value);
  });

  it('uploads on the delay bound without a checkpoint', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams, { uploadBytesThreshold: 1 << 20 });
    mutate(live, 3, 0);
    await time.advance(9);
    expect(streams.writes).toHaveLength(0);
    await time.advance(1);
    expect(streams.writes).toHaveLength(1);
    expect(live.changelogFigures().uploadedBytes).toBe(streams.writes[0]!.bytes);
  });

  it('materializes in the background, then truncates the log the next checkpoints refer to', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams, { materializationIntervalMs: 1000 });
    mutate(live, 30, 0);
    const h1 = await checkpoint(live, 1);
    await time.advance(1000);
    mutate(live, 30, 1);
    const h2 = await checkpoint(live, 2); // starts a materialization of everything before h2.toSeq
    expect(h2.materialization.handles).toEqual([]);
    await time.advance(1);
    mutate(live, 30, 2);
    const h3 = await checkpoint(live, 3);
    expect(h3.materialization.seq).toBe(h2.toSeq);
    expect(h3.materialization.handles).toHaveLength(1);
    expect(h3.segments.every((s) => s.toSeq > h2.toSeq)).toBe(true);
    expect(h3.segments.some((s) => h1.segments.includes(s))).toBe(false);
    expect(live.changelogFigures()).toMatchObject({ materializations: 1, truncations: 1 });
    expect(contents(await restoredHeap([h3]))).toEqual(contents(live));
  });

  it('starts a materialization before its interval once the log passes its share of the last one (and 1 MB), a restored log included', async () => {
    const big = new ValueStateDescriptor<string>('big');
    const write = (b: ChangelogKeyedStateBackend, from: number, count: number, round: number): void => {
      const state = b.getState<ValueState<string>>(big);
      for (let k = from; k < from + count; k++) {
        setKey(b as never, `k${k}`);
        state.update(`${round}:`.padEnd(2000, 'x'));
      }
    };
    const run = async (share: number) => {
      const time = new ManualTime();
      const streams = new SegmentStreams();
      // The interval (60 s) never runs out here: only the log's size can start a materialization.
      const live = changelogOver(keyedBackend(), time, streams, { materializationLogShareMax: share, uploadBytesThreshold: 64 * 1024 });
      write(live, 0, 400, 0); // ~0.8 MB of log: under the 1 MB floor
      await checkpoint(live, 1);
      await time.advance(5);
      const afterFloor = live.changelogFigures().materializations;
      write(live, 400, 200, 0); // ~1.2 MB: past the floor, and no materialization yet to weigh it against
      await checkpoint(live, 2);
      await time.advance(5);
      const first = live.changelogFigures();
      const h3 = await checkpoint(live, 3); // adopts it: ~1.2 MB of state
      write(live, 0, 500, 1); // ~1.0 MB of log: under the state's size
      await checkpoint(live, 4);
      await time.advance(5);
      const under = live.changelogFigures().materializations;
      write(live, 0, 200, 2); // ~1.4 MB in all: past it
      const h5 = await checkpoint(live, 5);
      await time.advance(5);
      return { afterFloor, first, h3, under, over: live.changelogFigures().materializations, h5, live };
    };
    const at1 = await run(1);
    expect(at1.afterFloor).toBe(0);
    expect(at1.first.materializations).toBe(1);
    expect(at1.first.materializedBytes).toBeGreaterThan(1_100_000);
    expect(at1.h3.materialization.handles).toHaveLength(1);
    expect(at1.under).toBe(1);
    expect(at1.over).toBe(2);
    const at2 = await run(2);
    expect([at2.afterFloor, at2.first.materializations, at2.under, at2.over]).toEqual([0, 1, 1, 1]);

    // A same-range restore counts the log it continues: h5 of the share-2 run holds ~1.4 MB of log
    // over a ~1.2 MB materialization; at share 1 the first checkpoint after the restore starts one.
    const time = new ManualTime();
    const restored = changelogOver(keyedBackend(), time, new SegmentStreams(), { materializationLogShareMax: 1 });
    restored.getState(big);
    await restored.restore([at2.h5], inlineReader());
    await checkpoint(restored, 6);
    await time.advance(5);
    expect(restored.changelogFigures().materializations).toBe(1);
  });

  it('restores a subset of key groups (rescale) and continues the log after a same-range restore', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams);
    mutate(live, 50, 0);
    const h1 = await checkpoint(live, 1);
    const half = { start: 0, end: M / 2 - 1 };
    const lower = await restoredHeap([h1], half);
    const all = contents(live);
    const lowerContents = contents(lower);
    expect(lowerContents.value!.length).toBeGreaterThan(0);
    expect(lowerContents.value!.length).toBeLessThan(all.value!.length);
    for (const [k, v] of lowerContents.value!) expect(all.value).toContainEqual([k, v]);

    // Restore from a checkpoint, then take the next one (FLINK-38307 fails it).
    const next = changelogOver(keyedBackend(), time, streams);
    for (const d of Object.values(descriptors)) next.getState(d);
    await next.restore([h1], inlineReader());
    mutate(next, 50, 1);
    mutate(live, 50, 1);
    const h2 = await checkpoint(next, 2);
    expect(h2.toSeq).toBeGreaterThan(h1.toSeq);
    expect(h2.segments.slice(0, h1.segments.length)).toEqual(h1.segments);
    expect(contents(await restoredHeap([h2]))).toEqual(contents(live));
  });

  it('after a rescaled restore the first checkpoint waits for a materialization', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams);
    mutate(live, 50, 0);
    const h1 = await checkpoint(live, 1);
    const half = { start: M / 2, end: M - 1 };
    const upper = changelogOver(keyedBackend(half), time, streams);
    for (const d of Object.values(descriptors)) upper.getState(d);
    await upper.restore([h1], inlineReader());
    const h2 = await checkpoint(upper, 2);
    expect(h2.materialization.handles).toHaveLength(1);
    expect(h2.materialization.seq).toBe(0);
    expect(contents(await restoredHeap([h2], half))).toEqual(contents(upper));
  });

  it('names a torn or lost segment at restore', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams);
    mutate(live, 40, 0);
    const h1 = await checkpoint(live, 1);
    const victim = h1.segments[1]!;
    if (victim.stream.type !== 'inline') throw new Error('expected inline segments');
    const torn = {
      ...h1,
      segments: h1.segments.map((s) =>
        s === victim
          ? { ...s, stream: { ...victim.stream, data: victim.stream.type === 'inline' ? victim.stream.data.subarray(0, 20) : new Uint8Array() } }
          : s,
      ),
    };
    await expect(restoredHeap([torn as ChangelogStateHandle])).rejects.toThrowError(/changelog batch 0 at byte 0: torn/);
    const lost = { ...h1, segments: h1.segments.filter((s) => s !== victim) };
    const error = await restoredHeap([lost]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as Error).message).toMatch(/changes from \d+ are missing/);
  });

  it('retries failed uploads a bounded number of times, then fails the checkpoints that need them', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams);
    streams.mode = 'fail';
    mutate(live, 5, 0);
    const run = live.snapshot(checkpointId(1), new InlineStreams(1)).run();
    await expect(run).rejects.toThrowError(/failed after 3 attempts: injected upload failure/);
    expect(streams.failures).toBe(3);
    expect(live.changelogFigures()).toMatchObject({ retries: 2, failures: 1, inFlightBytes: 0 });
  });

  it('holds input back while too many log bytes are in flight, and wakes the task when they land', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams, { uploadBytesThreshold: 512, inFlightBytesMax: 2048 });
    streams.mode = 'held';
    let woken = 0;
    expect(live.inputHold.holding()).toBe(false);
    mutate(live, 60, 0);
    expect(live.changelogFigures().inFlightBytes).toBeGreaterThanOrEqual(2048);
    expect(live.inputHold.holding()).toBe(true);
    live.inputHold.onRelease(() => woken++);
    await time.advance(100);
    expect(woken).toBe(0);
    streams.release();
    await time.advance(1);
    expect(live.inputHold.holding()).toBe(false);
    expect(woken).toBe(1);
  });

  it('times out an upload that never completes', async () => {
    const time = new ManualTime();
    const streams = new SegmentStreams();
    const live = changelogOver(keyedBackend(), time, streams, { uploadAttemptsMax: 2 });
    streams.mode = 'hang';
    mutate(live, 5, 0);
    let outcome: unknown = 'pending';
    live
      .snapshot(checkpointId(1), new InlineStreams(1))
      .run()
      .then(
        () => (outcome = 'resolved'),
        (e: unknown) => (outcome = e),
      );
    await time.advance(1999);
    expect(outcome).toBe('pending');
    await time.advance(1);
    expect(String(outcome)).toMatch(/did not finish within 1000 ms/);
  });

  it("writes savepoints canonical: the wrapped backend's own handle, no log", async () => {
    const time = new ManualTime();
    const live = changelogOver(keyedBackend(), time, new SegmentStreams());
    mutate(live, 20, 0);
    const handles = await live.snapshot(checkpointId(7), new InlineStreams(7), { kind: 'savepoint' }).run();
    expect(handles.map((h) => h.type)).toEqual(['key-groups']);
    const into = changelogOver(keyedBackend(), time, new SegmentStreams());
    for (const d of Object.values(descriptors)) into.getState(d);
    await into.restore(handles, inlineReader());
    expect(contents(into)).toEqual(contents(live));
  });
});
