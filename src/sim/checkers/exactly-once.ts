/** Checker (a): committed output equals the oracle as a multiset (exactly-once), or covers it (at-least-once). */
export function checkOutput(mode: 'exactly-once' | 'at-least-once', committed: readonly string[], oracle: readonly string[]): string[] {
  const want = new Map<string, number>();
  for (const r of oracle) want.set(r, (want.get(r) ?? 0) + 1);
  const got = new Map<string, number>();
  for (const r of committed) got.set(r, (got.get(r) ?? 0) + 1);
  const problems: string[] = [];
  for (const [r, n] of want) {
    const m = got.get(r) ?? 0;
    if (m < n) problems.push(`lost: '${r}' committed ${m} times, expected ${n}`);
    else if (m > n && mode === 'exactly-once') problems.push(`duplicate: '${r}' committed ${m} times, expected ${n}`);
    if (problems.length >= 10) break;
  }
  for (const r of got.keys()) {
    if (!want.has(r)) problems.push(`unexpected: '${r}' is not in the oracle output`);
    if (problems.length >= 10) break;
  }
  if (problems.length > 0) problems.unshift(`committed ${committed.length} records, oracle ${oracle.length}`);
  return problems;
}
