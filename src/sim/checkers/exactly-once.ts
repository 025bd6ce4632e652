/**
 * Checker (a): the committed output against the fault-free run of the same seed (the oracle).
 * What exactly-once promises is that each input's effect is committed once and per-key state stays
 * consistent, not that the output is the same text: a job whose output depends on how two inputs
 * interleave commits other lines under faults, correctly. So the comparison follows an output rule:
 * `multiset` (the lines are the same, in any order: built-in scenarios, and jobs that declare
 * `simOutput = 'order-independent'`), `counts` (as many records per sink: user jobs that declare
 * nothing), or `custom` (the job module's own `simCheck`).
 */
import type { SimCheck } from '../../api/job-module.ts';

export type Guarantee = 'exactly-once' | 'at-least-once';

/** Committed records per sink uid, in commit order. */
export type SinkRecords = Readonly<Record<string, readonly unknown[]>>;

/** A job module's own output check (`export function simCheck(committed, oracle, guarantee)`), part of the public JobModule. */
export type { SimCheck } from '../../api/job-module.ts';

export type OutputRule = { readonly kind: 'multiset' } | { readonly kind: 'counts' } | { readonly kind: 'custom'; readonly check: SimCheck };

const PROBLEMS_MAX = 10;

export function checkOutput(mode: Guarantee, committed: readonly string[], oracle: readonly string[], rule: OutputRule = { kind: 'multiset' }): string[] {
  switch (rule.kind) {
    case 'multiset':
      return checkMultiset(mode, committed, oracle);
    case 'counts':
      return checkCounts(mode, recordsBySink(committed), recordsBySink(oracle));
    case 'custom':
      return checkCustom(rule.check, mode, recordsBySink(committed), recordsBySink(oracle));
  }
}

/** Same lines as the oracle, each as often (exactly-once), or at least as often (at-least-once). */
export function checkMultiset(mode: Guarantee, committed: readonly string[], oracle: readonly string[]): string[] {
  const want = tally(oracle);
  const got = tally(committed);
  const problems: string[] = [];
  for (const [r, n] of want) {
    const m = got.get(r) ?? 0;
    if (m < n) problems.push(`lost: '${r}' committed ${m} times, expected ${n}`);
    else if (m > n && mode === 'exactly-once') problems.push(`duplicate: '${r}' committed ${m} times, expected ${n}`);
    if (problems.length >= PROBLEMS_MAX) break;
  }
  for (const r of got.keys()) {
    if (!want.has(r)) problems.push(`unexpected: '${r}' is not in the oracle output`);
    if (problems.length >= PROBLEMS_MAX) break;
  }
  if (problems.length > 0) problems.unshift(`committed ${committed.length} records, oracle ${oracle.length}`);
  return problems;
}

function checkCounts(mode: Guarantee, committed: SinkRecords, oracle: SinkRecords): string[] {
  const problems: string[] = [];
  for (const uid of new Set([...Object.keys(oracle), ...Object.keys(committed)])) {
    const got = committed[uid]?.length ?? 0;
    const want = oracle[uid]?.length ?? 0;
    if (got < want || (got > want && mode === 'exactly-once')) problems.push(`sink ${uid}: ${got} records committed, the fault-free run committed ${want}`);
  }
  return problems;
}

function checkCustom(check: SimCheck, mode: Guarantee, committed: SinkRecords, oracle: SinkRecords): string[] {
  let problems: readonly string[];
  try {
    problems = check(committed, oracle, mode);
  } catch (err) {
    return [`simCheck threw: ${err instanceof Error ? err.message : String(err)}`];
  }
  if (!Array.isArray(problems)) return [`simCheck must return an array of problems (strings), got ${typeof problems}`];
  return problems.slice(0, PROBLEMS_MAX * 2).map(String);
}

function tally(lines: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of lines) out.set(r, (out.get(r) ?? 0) + 1);
  return out;
}

/**
 * Splits `<uid>\t<record>` lines (how the simulator records a user job's commits) per sink.
 * Objects and arrays were written as JSON and come back decoded; anything else stays text.
 */
export function recordsBySink(lines: readonly string[]): SinkRecords {
  const out: Record<string, unknown[]> = {};
  for (const line of lines) {
    const tab = line.indexOf('\t');
    const uid = tab < 0 ? '' : line.slice(0, tab);
    const text = tab < 0 ? line : line.slice(tab + 1);
    (out[uid] ??= []).push(text.startsWith('{') || text.startsWith('[') ? decode(text) : text);
  }
  return out;
}

function decode(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
