/**
 * Heap value state against snapshots taken between `value()` and `update()` of one key, while a
 * copy-on-write copy shares the captured map's entries, and around clear and restore. Written for
 * the state-cells experiment (a mutable cell per key, written in place; see BENCHMARKS.md, issue
 * 28 step 3), which did not pay and was reverted: any later record-path shortcut must pass these.
 */
import { describe, expect, it } from 'vitest';
import { checkpointId } from '../../../src/core/ids.ts';
import type { StateChangeListener } from '../../../src/state/backend.ts';
import type { KeyedStateHandle } from '../../../src/state/handles/registry.ts';
import type { HeapKeyedStateBackend } from '../../../src/state/heap/heap-keyed-backend.ts';
import { InlineStreams, inlineReader } from '../helpers.ts';
import { allStates, keyedBackend, setKey } from './fixtures.ts';

async function restoredEntries(handles: readonly KeyedStateHandle[], restored = keyedBackend()): Promise<unknown> {
  await restored.restore(handles, inlineReader());
  return sorted(restored);
}

function sorted(b: HeapKeyedStateBackend): Array<[unknown, unknown]> {
  return b.entries('value').sort((x, y) => String(x[0]).localeCompare(String(y[0])));
}

describe('heap value state: snapshots around value() and update()', () => {
  it('a snapshot taken between value() and update() of the same key keeps the old value', async () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    expect(value.value()).toBe(1);
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    value.update(2);
    // Writes after the snapshot (which a shortcut like the cells would make in place) must not reach it.
    expect(value.value()).toBe(2);
    value.update(3);
    const handles = await runner.run();
    expect(await restoredEntries(handles)).toEqual([['k', 1]]);
    expect(sorted(b)).toEqual([['k', 3]]);
  });

  it('a cell made between two live snapshots is copied, not written, after the second', async () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    const first = b.snapshot(checkpointId(1), new InlineStreams(1));
    value.update(value.value()! + 1);
    const second = b.snapshot(checkpointId(2), new InlineStreams(2));
    value.update(value.value()! + 1);
    value.update(value.value()! + 1);
    expect(await restoredEntries(await second.run())).toEqual([['k', 2]]);
    expect(await restoredEntries(await first.run())).toEqual([['k', 1]]);
    expect(sorted(b)).toEqual([['k', 4]]);
  });

  it('cells shared by a copy-on-write copy and a live snapshot are not written in place', async () => {
    const b = keyedBackend({ start: 0, end: 0 }, 0, 1);
    const { value } = allStates(b);
    for (const key of ['a', 'b']) {
      setKey(b, key);
      value.update(10);
    }
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    // The write to 'a' copies the (only) group map; 'b''s old cell is now in both maps.
    setKey(b, 'a');
    value.update(value.value()! + 1);
    setKey(b, 'b');
    value.update(value.value()! + 1);
    setKey(b, 'b');
    value.update(value.value()! + 1);
    expect(await restoredEntries(await runner.run(), keyedBackend({ start: 0, end: 0 }, 0, 1))).toEqual([
      ['a', 10],
      ['b', 10],
    ]);
    expect(sorted(b)).toEqual([
      ['a', 11],
      ['b', 12],
    ]);
  });

  it('update without a preceding value() still keeps a live snapshot intact', async () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    const runner = b.snapshot(checkpointId(1), new InlineStreams(1));
    setKey(b, 'other');
    setKey(b, 'k');
    value.update(5);
    value.update(6);
    expect(await restoredEntries(await runner.run())).toEqual([['k', 1]]);
    expect(sorted(b)).toEqual([['k', 6]]);
  });

  it('after a snapshot completed, later snapshots see later writes', async () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    const first = b.snapshot(checkpointId(1), new InlineStreams(1));
    expect(await restoredEntries(await first.run())).toEqual([['k', 1]]);
    b.notifyCheckpointComplete(checkpointId(1));
    value.update(value.value()! + 1);
    const second = b.snapshot(checkpointId(2), new InlineStreams(2));
    value.update(value.value()! + 1);
    expect(await restoredEntries(await second.run())).toEqual([['k', 2]]);
    expect(sorted(b)).toEqual([['k', 3]]);
  });

  it('switching keys between value() and update() writes the new key, not the remembered cell', () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'a');
    value.update(1);
    expect(value.value()).toBe(1);
    setKey(b, 'b');
    value.update(7);
    setKey(b, 'a');
    expect(value.value()).toBe(1);
    setKey(b, 'b');
    expect(value.value()).toBe(7);
  });

  it('clear and update(undefined) between value() and update() forget the cell', () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    expect(value.value()).toBe(1);
    value.clear();
    expect(b.entries('value')).toEqual([]);
    value.update(2);
    expect(b.entries('value')).toEqual([['k', 2]]);
    expect(value.value()).toBe(2);
    value.update(undefined as unknown as number);
    expect(value.value()).toBeUndefined();
    value.update(3);
    expect(b.entries('value')).toEqual([['k', 3]]);
    expect(b.keyCounts()).toMatchObject({ value: 1 });
  });

  it('restore, entries and the change listener see plain values, and restored cells are written back', async () => {
    const b = keyedBackend();
    const { value } = allStates(b);
    const changes: Array<[unknown, unknown]> = [];
    const listener: StateChangeListener = { onChange: (_name, _kg, key, _op, v) => void changes.push([key, v]) };
    b.setChangeListener(listener);
    setKey(b, 'k');
    value.update(1);
    value.update(value.value()! + 1);
    expect(changes).toEqual([
      ['k', 1],
      ['k', 2],
    ]);
    const handles = await b.snapshot(checkpointId(1), new InlineStreams(1)).run();
    const restored = keyedBackend();
    await restored.restore(handles, inlineReader());
    expect(restored.entries('value')).toEqual([['k', 2]]);
    const again = allStates(restored).value;
    setKey(restored, 'k');
    expect(again.value()).toBe(2);
    again.update(again.value()! + 1);
    expect(restored.entries('value')).toEqual([['k', 3]]);
    expect(await restoredEntries(await restored.snapshot(checkpointId(2), new InlineStreams(2)).run())).toEqual([['k', 3]]);
  });

  it('a restore between value() and update() is not written through the remembered cell', async () => {
    const source = keyedBackend();
    setKey(source, 'k');
    allStates(source).value.update(100);
    const handles = await source.snapshot(checkpointId(1), new InlineStreams(1)).run();
    const b = keyedBackend();
    const { value } = allStates(b);
    setKey(b, 'k');
    value.update(1);
    expect(value.value()).toBe(1);
    await b.restore(handles, inlineReader());
    setKey(b, 'k');
    value.update(value.value()! + 1);
    expect(b.entries('value')).toEqual([['k', 101]]);
  });
});
