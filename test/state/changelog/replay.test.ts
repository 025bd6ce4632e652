import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../src/core/errors.ts';
import type { StateKind } from '../../../src/state/descriptors.ts';
import type { KeyedRestoreSink } from '../../../src/state/formats/keyed-file-reader.ts';
import type { Key } from '../../../src/state/key-groups.ts';
import { decodeValue } from '../../../src/state/codec.ts';
import { readSegment } from '../../../src/state/changelog/log-format.ts';
import { ChangelogWriter } from '../../../src/state/changelog/log-writer.ts';
import { ReplaySink } from '../../../src/state/changelog/replay.ts';

/** A sink that records what reaches it. */
class Recording implements KeyedRestoreSink {
  readonly state = new Map<string, unknown>();
  ends = 0;
  put(name: string, _kind: StateKind, keyGroup: number, key: Key, value: unknown): void {
    this.state.set(`${name}/${keyGroup}/${String(key)}`, value);
  }
  remove(name: string, _kind: StateKind, keyGroup: number, key: Key): void {
    this.state.delete(`${name}/${keyGroup}/${String(key)}`);
  }
  endKeyGroup(): void {
    this.ends++;
  }
}

function replay(writer: ChangelogWriter, materialized: Array<[string, StateKind, number, Key, unknown]>): Recording {
  const out = new Recording();
  const sink = new ReplaySink(out, 'log');
  for (const c of readSegment(writer.seal()!.bytes, 'seg')) sink.add(c);
  for (const [name, kind, group, key, value] of materialized) sink.put(name, kind, group, key, value);
  sink.endKeyGroup();
  sink.finishKeyGroup(0);
  sink.finishKeyGroup(1);
  return out;
}

describe('changelog replay', () => {
  it('folds list and map changes over the materialization without changing its values, and resets at set and clear', () => {
    const w = new ChangelogWriter();
    const list = w.stateId('list', 'list');
    const map = w.stateId('map', 'map');
    const value = w.stateId('value', 'value');
    w.append('append', list, 0, 'a', 'x3', undefined);
    w.append('append', list, 0, 'a', 'x4', undefined);
    w.append('mapPut', map, 0, 'a', 2, 'two');
    w.append('mapRemove', map, 0, 'a', undefined, 'one');
    w.append('set', list, 1, 'b', ['s'], undefined);
    w.append('append', list, 1, 'b', 't', undefined);
    w.append('clear', map, 1, 'b', undefined, undefined);
    w.append('mapPut', map, 1, 'b', 9, 'nine');
    w.append('mapRemove', map, 1, 'c', undefined, 'only');
    w.append('mapPut', map, 1, 'c', 1, 'again');
    w.append('set', value, 0, 'v', 1, undefined);
    w.append('set', value, 0, 'v', 2, undefined);
    w.append('clear', value, 0, 'w', undefined, undefined);
    const shared = ['x1', 'x2'];
    const sharedMap = new Map<unknown, unknown>([['one', 1]]);
    const out = replay(w, [
      ['list', 'list', 0, 'a', shared],
      ['map', 'map', 0, 'a', sharedMap],
      ['list', 'list', 1, 'b', ['old']],
      ['map', 'map', 1, 'b', new Map([['old', 0]])],
      ['map', 'map', 1, 'c', new Map([['only', 0]])],
      ['value', 'value', 0, 'w', 5],
      ['value', 'value', 0, 'untouched', 7],
    ]);
    expect(out.state.get('list/0/a')).toEqual(['x1', 'x2', 'x3', 'x4']);
    expect(out.state.get('map/0/a')).toEqual(new Map([['two', 2]]));
    expect(out.state.get('list/1/b')).toEqual(['s', 't']);
    expect(out.state.get('map/1/b')).toEqual(new Map([['nine', 9]]));
    expect(out.state.get('map/1/c')).toEqual(new Map([['again', 1]])); // emptied by the remove, then put again
    expect(out.state.get('value/0/v')).toBe(2);
    expect(out.state.has('value/0/w')).toBe(false);
    expect(out.state.get('value/0/untouched')).toBe(7);
    // The materialization's own values were copied, not changed.
    expect(shared).toEqual(['x1', 'x2']);
    expect(sharedMap).toEqual(new Map([['one', 1]]));
  });

  it("decodes only the values that count: a superseded set's value is never read, the kept one is named when it does not decode", () => {
    const w = new ChangelogWriter();
    const value = w.stateId('value', 'value');
    w.append('set', value, 0, 'k', 'first', undefined);
    w.append('set', value, 0, 'k', 'second', undefined);
    const bytes = w.seal()!.bytes;
    const changes = readSegment(bytes, 'seg');
    // Spoil the first value's msgpack after the checksum was checked (0xc1 is never used by msgpack).
    const first = changes[0]!;
    const spoiled = { ...first, body: first.body.slice(), valueAt: first.valueAt };
    spoiled.body[spoiled.valueAt] = 0xc1;
    const ok = new Recording();
    const sink = new ReplaySink(ok, 'log of checkpoint 3');
    sink.add(spoiled);
    sink.add(changes[1]!);
    sink.finishKeyGroup(0);
    expect(ok.state.get('value/0/k')).toBe('second');
    const bad = new ReplaySink(new Recording(), 'log of checkpoint 3');
    bad.add(changes[0]!);
    bad.add({ ...spoiled, seq: 1 });
    let thrown: unknown;
    try {
      bad.finishKeyGroup(0);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StorageError);
    expect((thrown as Error).message).toMatch(/log of checkpoint 3/);
    expect((thrown as Error).message).toMatch(/change 1 \(set on state "value"\): its value does not decode/);
  });

  it("hands a sink that stores encoded values a whole-value set's bytes as logged, each key in the materialization's place, the log's new keys at the group's end", () => {
    const w = new ChangelogWriter();
    const value = w.stateId('value', 'value');
    const list = w.stateId('list', 'list');
    const map = w.stateId('map', 'map');
    w.append('set', value, 0, 1, 'one', undefined);
    w.append('set', list, 0, 2, ['a'], undefined);
    w.append('set', list, 0, 3, ['x'], undefined);
    w.append('append', list, 0, 3, 'y', undefined);
    w.append('mapPut', map, 0, 4, 'v', 'k');
    w.append('set', value, 0, 5, 'new key', undefined);
    w.append('set', value, 0, 6, 'gone', undefined);
    w.append('clear', value, 0, 6, undefined, undefined);
    const calls: Array<[string, string, Key, unknown]> = [];
    const sink: KeyedRestoreSink = {
      put: (name, _kind, _group, key, v) => void calls.push(['put', name, key, v]),
      putEncoded: (name, _kind, _group, key, bytes) => void calls.push(['putEncoded', name, key, decodeValue(bytes)]),
      remove: (name, _kind, _group, key) => void calls.push(['remove', name, key, undefined]),
    };
    const replay = new ReplaySink(sink, 'log');
    for (const c of readSegment(w.seal()!.bytes, 'seg')) replay.add(c);
    replay.put('value', 'value', 0, 0, 'untouched');
    replay.put('value', 'value', 0, 1, 'old');
    replay.put('list', 'list', 0, 2, ['old']);
    replay.put('list', 'list', 0, 3, ['old']);
    replay.put('map', 'map', 0, 4, new Map([['j', 'w']]));
    replay.put('value', 'value', 0, 6, 'materialized');
    // an increment of the materialization hands key 1 over again: folded again, the sink keeps the last
    replay.put('value', 'value', 0, 1, 'older increment');
    replay.finishKeyGroup(0);
    expect(calls).toEqual([
      ['put', 'value', 0, 'untouched'],
      ['putEncoded', 'value', 1, 'one'],
      ['putEncoded', 'list', 2, ['a']],
      ['put', 'list', 3, ['x', 'y']],
      [
        'put',
        'map',
        4,
        new Map([
          ['j', 'w'],
          ['k', 'v'],
        ]),
      ],
      ['remove', 'value', 6, undefined],
      ['putEncoded', 'value', 1, 'one'],
      ['putEncoded', 'value', 5, 'new key'],
    ]);
  });
});
