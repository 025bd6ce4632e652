/**
 * Fields every keyed handle kind writes into a metadata body the same way: its key-group range,
 * [keyGroup, offset, length] offsets and key counts. Part of the metadata format (see
 * `MetadataLayout`): changing how any of them is written is a new metadata version.
 */
import type { WireCheck } from '../../storage/wire-check.ts';
import type { KeyGroupRange } from '../key-groups.ts';

export type Offsets = ReadonlyArray<readonly [number, number, number]>;

export function writeRange(range: KeyGroupRange): [number, number] {
  return [range.start, range.end];
}

export function writeOffsets(offsets: Offsets): Array<[number, number, number]> {
  return offsets.map(([kg, off, len]) => [kg, off, len]);
}

export function writeKeyCounts(keyCounts: Readonly<Record<string, number>>): Array<[string, number]> {
  return Object.entries(keyCounts);
}

export function readRange(c: WireCheck, v: unknown, at: string): KeyGroupRange {
  const range = c.array(v, at);
  if (range.length !== 2) c.fail(at, '[start, end]');
  // end < start is a valid empty range, so it is not rejected; -1 allows [0, -1].
  return { start: c.int(range[0], `${at}[0]`), end: c.int(range[1], `${at}[1]`, -1) };
}

export function readOffsets(c: WireCheck, v: unknown, at: string): Array<readonly [number, number, number]> {
  return c.array(v, at).map((t, i) => {
    const triple = c.array(t, `${at}[${i}]`);
    if (triple.length !== 3) c.fail(`${at}[${i}]`, '[keyGroup, offset, length]');
    return [c.int(triple[0], `${at}[${i}][0]`), c.int(triple[1], `${at}[${i}][1]`), c.int(triple[2], `${at}[${i}][2]`)] as const;
  });
}

export function readKeyCounts(c: WireCheck, v: unknown, at: string): Record<string, number> {
  const keyCounts: Record<string, number> = {};
  c.array(v, at).forEach((p, i) => {
    const pair = c.array(p, `${at}[${i}]`);
    if (pair.length !== 2) c.fail(`${at}[${i}]`, '[name, count]');
    // defineProperty, not assignment, so a state named "__proto__" stays an ordinary entry.
    Object.defineProperty(keyCounts, c.string(pair[0], `${at}[${i}][0]`), {
      value: c.int(pair[1], `${at}[${i}][1]`),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
  return keyCounts;
}
