/**
 * Checker (f): with exactly-once, each key's output becomes visible in the order it was written.
 * The keyed-counts and union scenarios commit `key:seq` lines from a keyed operator that sees each
 * key's sequence rise by one, through a forward connection into a two-phase-commit sink: every
 * key reaches one sink subtask, so its committed sequence numbers must rise in commit order. A
 * multiset comparison cannot see a transaction of checkpoint 4 committed before the one of
 * checkpoint 3 (after a restore with several pending commits); an upserting sink would keep the
 * older value. At-least-once replays legitimately commit a key's records again, lower numbers
 * after higher ones, so this applies to exactly-once modes only.
 */
const PROBLEMS_MAX = 10;

export function checkCommitOrder(committed: readonly string[]): string[] {
  const last = new Map<string, number>();
  const problems: string[] = [];
  for (let i = 0; i < committed.length && problems.length < PROBLEMS_MAX; i++) {
    const line = committed[i]!;
    const colon = line.lastIndexOf(':');
    const key = line.slice(0, colon);
    const seq = Number(line.slice(colon + 1));
    if (colon < 0 || !Number.isInteger(seq)) continue;
    const before = last.get(key);
    if (before !== undefined && seq <= before) problems.push(`key ${key}: seq ${seq} committed after seq ${before} (commit #${i})`);
    last.set(key, seq);
  }
  return problems;
}
