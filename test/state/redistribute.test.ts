import { describe, expect, it } from 'vitest';
import { keyedHandlesForRange, redistributeListEntries } from '../../src/state/redistribute.ts';
import type { KeyGroupsStateHandle } from '../../src/state/handles/key-groups.ts';

const handle = (start: number, end: number): KeyGroupsStateHandle => ({
  type: 'key-groups',
  range: { start, end },
  offsets: [],
  stream: { type: 'inline', data: new Uint8Array(), checksum: 0 },
  keyCounts: {},
});

describe('keyedHandlesForRange', () => {
  it('keeps the handles that intersect the range', () => {
    const all = [handle(0, 42), handle(43, 85), handle(86, 127)];
    expect(keyedHandlesForRange(all, { start: 0, end: 63 })).toEqual([all[0], all[1]]);
    expect(keyedHandlesForRange(all, { start: 64, end: 127 })).toEqual([all[1], all[2]]);
    expect(keyedHandlesForRange(all, { start: 85, end: 86 })).toEqual([all[1], all[2]]);
    expect(keyedHandlesForRange(all, { start: 0, end: 127 })).toEqual(all);
  });
});

describe('redistributeListEntries', () => {
  it('split 3 -> 2 deals contiguous chunks, the extra to earlier subtasks', () => {
    expect(redistributeListEntries('split', [['a', 'b'], ['c'], ['d', 'e']], 2)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
  });

  it('split 2 -> 5 leaves later subtasks empty when entries run out', () => {
    expect(redistributeListEntries('split', [[1, 2], [3]], 5)).toEqual([[1], [2], [3], [], []]);
    expect(
      redistributeListEntries(
        'split',
        [
          [1, 2, 3, 4],
          [5, 6, 7],
        ],
        5,
      ),
    ).toEqual([[1, 2], [3, 4], [5], [6], [7]]);
  });

  it('split at unchanged parallelism keeps each subtask its own entries', () => {
    expect(redistributeListEntries('split', [[1, 2, 3, 4, 5], [], [6]], 3)).toEqual([[1, 2, 3, 4, 5], [], [6]]);
  });

  it('union gives everyone the concatenation, at any parallelism', () => {
    const old = [['a'], ['b', 'c'], []];
    expect(redistributeListEntries('union', old, 2)).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
    expect(redistributeListEntries('union', old, 3)).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
    expect(redistributeListEntries('union', [['x'], ['y']], 5)).toEqual(Array.from({ length: 5 }, () => ['x', 'y']));
  });

  it('never loses or duplicates split entries', () => {
    for (let oldP = 1; oldP <= 6; oldP++) {
      const old = Array.from({ length: oldP }, (_, i) => Array.from({ length: (i * 7) % 5 }, (_, j) => `${i}.${j}`));
      for (let newP = 1; newP <= 8; newP++) {
        const out = redistributeListEntries('split', old, newP);
        expect(out).toHaveLength(newP);
        expect(out.flat()).toEqual(old.flat());
        if (newP !== oldP) {
          const sizes = out.map((e) => e.length);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        }
      }
    }
  });

  it('returns fresh arrays', () => {
    const old = [[1], [2]];
    const out = redistributeListEntries('split', old, 2);
    const [first] = out;
    if (!first) throw new Error('redistributeListEntries returned no entries for subtask 0');
    first.push(99);
    expect(old[0]).toEqual([1]);
  });
});
