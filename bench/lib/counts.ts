/**
 * Final keyed counts of a benchmark variant: comparing them against a reference (failing loudly),
 * and a digest that lets a result file show that every variant computed the same counts.
 */

export type Counts = ReadonlyMap<string, number>;

/** Throws, naming the first difference, unless `actual` holds exactly the entries of `expected`. */
export function assertSameCounts(variant: string, expected: Counts, actual: Counts): void {
  const problems: string[] = [];
  if (actual.size !== expected.size) problems.push(`${actual.size} distinct keys, expected ${expected.size}`);
  for (const [key, n] of expected) {
    const got = actual.get(key);
    if (got !== n) problems.push(`key ${JSON.stringify(key)}: count ${got}, expected ${n}`);
    if (problems.length >= 5) break;
  }
  if (problems.length === 0) {
    for (const key of actual.keys()) {
      if (!expected.has(key)) {
        problems.push(`unexpected key ${JSON.stringify(key)}`);
        break;
      }
    }
  }
  if (problems.length > 0) throw new Error(`${variant}: final counts differ from the hand-written loop's: ${problems.join('; ')}`);
}

export function totalCount(counts: Counts): number {
  let total = 0;
  for (const n of counts.values()) total += n;
  return total;
}

/** FNV-1a (32 bit) over `key=count;` in key order: equal digests mean equal counts, up to collisions. */
export function countsDigest(counts: Counts): number {
  let h = 0x811c9dc5;
  for (const key of [...counts.keys()].sort()) {
    const entry = `${key}=${counts.get(key)};`;
    for (let i = 0; i < entry.length; i++) h = Math.imul(h ^ entry.charCodeAt(i), 0x01000193);
  }
  return h >>> 0;
}
