import { describe, expect, it } from 'vitest';
import { RestoreError } from '../../src/core/errors.ts';
import { assignSplits, type SplitStateEntryV1, splitOwner } from '../../src/runtime/split-assignment.ts';
import type { SourceSplit } from '../../src/runtime/split-source.ts';

const M = 128;
const named = (n: number): SourceSplit[] => Array.from({ length: n }, (_, i) => ({ id: `stream-${i}` }));
const numbered = (n: number): SourceSplit[] => Array.from({ length: n }, (_, i) => ({ id: `part-${i}`, ordinal: i }));

function ownersOf(splits: readonly SourceSplit[], p: number): number[] {
  return splits.map((s) => splitOwner(s, p, M));
}

describe('splitOwner', () => {
  it('deals numbered splits round-robin, so n splits over p subtasks differ by at most one per subtask', () => {
    expect(ownersOf(numbered(7), 3)).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('places named splits by their id alone: the same owner whichever subtask asks, in range', () => {
    const splits = named(200);
    for (const p of [1, 2, 3, 5, 8]) {
      const owners = ownersOf(splits, p);
      expect(owners).toEqual(ownersOf(splits, p));
      for (const o of owners) expect(o >= 0 && o < p).toBe(true);
      expect(new Set(owners).size).toBe(p); // 200 splits reach every subtask
    }
  });

  it('on a rescale from 4 to 8 a named split moves only from subtask i to 2i or 2i+1 (key-group ranges split)', () => {
    for (const s of named(300)) expect(Math.floor(splitOwner(s, 8, M) / 2)).toBe(splitOwner(s, 4, M));
  });

  it('rejects a negative or fractional ordinal naming the split', () => {
    expect(() => splitOwner({ id: 'x', ordinal: -1 }, 2, M)).toThrow(/split 'x'/);
    expect(() => splitOwner({ id: 'y', ordinal: 1.5 }, 2, M)).toThrow(/split 'y'/);
  });
});

describe('assignSplits', () => {
  const entry = (id: string, position: number, ended = false): SplitStateEntryV1<SourceSplit, number> => ({ v: 1, split: { id }, position, ended });

  it('a fresh job: each enumerated split goes to exactly one subtask, at its initial position', () => {
    const splits = named(20);
    const all = [0, 1, 2].flatMap((s) => assignSplits([], splits, s, 3, M, () => 0));
    expect(all.map((e) => e.split.id).sort()).toEqual(splits.map((s) => s.id).sort());
    expect(all.every((e) => e.position === 0 && !e.ended)).toBe(true);
  });

  it('a rescale from 3 to 2: the union of restored entries is redistributed, each split once, with its position', () => {
    const splits = named(20);
    const restored = splits.map((s, i) => entry(s.id, 100 + i, i === 3));
    const after = [0, 1].map((s) => assignSplits(restored, splits, s, 2, M, () => -1));
    const all = after.flat();
    expect(all.map((e) => e.split.id).sort()).toEqual(splits.map((s) => s.id).sort());
    for (const e of all) {
      const i = Number(e.split.id.slice('stream-'.length));
      expect(e.position).toBe(100 + i);
      expect(e.ended).toBe(i === 3);
    }
    for (const [s, owned] of after.entries()) for (const e of owned) expect(splitOwner(e.split, 2, M)).toBe(s);
  });

  it('restored positions win over enumeration; new splits start at their initial position; unlisted restored splits are kept', () => {
    const restored = [entry('a', 7), entry('gone', 9)];
    const owned = assignSplits(restored, [{ id: 'a' }, { id: 'new' }], 0, 1, M, () => 0);
    expect(owned.map((e) => [e.split.id, e.position])).toEqual([
      ['a', 7],
      ['gone', 9],
      ['new', 0],
    ]);
  });

  it('a split restored twice is a RestoreError naming it; a split listed twice is rejected', () => {
    expect(() => assignSplits([entry('a', 1), entry('a', 2)], [], 0, 1, M, () => 0)).toThrow(RestoreError);
    expect(() => assignSplits([entry('a', 1), entry('a', 2)], [], 0, 1, M, () => 0)).toThrow(/split 'a' appears twice/);
    expect(() => assignSplits([], [{ id: 'b' }, { id: 'b' }], 0, 1, M, () => 0)).toThrow(/split 'b' is listed twice/);
  });

  it('an entry of an unknown format version is a RestoreError', () => {
    const future = { v: 2, split: { id: 'a' }, position: 1, ended: false } as unknown as SplitStateEntryV1<SourceSplit, number>;
    expect(() => assignSplits([future], [], 0, 1, M, () => 0)).toThrow(/format version 2/);
  });
});
