/**
 * The demo's exactly-once check, a pure function of the committed lines and the expected ledger:
 * every posting and opening is committed exactly once, each account's updates form an unbroken
 * chain (seq 1..n, each balance = previous + delta), final balances equal `expected`, and the
 * total is unchanged.
 */
import type { BalanceUpdate, ExpectedLedger } from '../../examples/bank-transfers.ts';

export interface LedgerVerdict {
  readonly ok: boolean;
  /** At most a few problems, each one line. */
  readonly problems: readonly string[];
  readonly committed: number;
  readonly finalTotal: number;
}

const MAX_PROBLEMS = 5;

export function verifyLedger(lines: readonly string[], want: ExpectedLedger, transfers: number): LedgerVerdict {
  const problems: string[] = [];
  const report = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const byAccount = new Map<number, BalanceUpdate[]>();
  const seen = new Set<string>();
  let duplicates = 0;
  for (const line of lines) {
    let u: BalanceUpdate;
    try {
      u = JSON.parse(line) as BalanceUpdate;
    } catch {
      report(`not a balance update: ${line.slice(0, 80)}`);
      continue;
    }
    if (seen.has(u.ref)) {
      duplicates++;
      report(`${u.ref} committed more than once (account ${u.account})`);
    }
    seen.add(u.ref);
    const list = byAccount.get(u.account) ?? [];
    list.push(u);
    byAccount.set(u.account, list);
  }
  const missing = countMissing(seen, want.openings, transfers, report);
  let finalTotal = 0;
  for (let a = 0; a < want.balances.length; a++) finalTotal += checkAccount(a, byAccount.get(a) ?? [], want, report);
  for (const a of byAccount.keys()) if (!(a >= 0 && a < want.balances.length)) report(`updates for unknown account ${a}`);
  if (finalTotal !== want.total) report(`total is ${finalTotal}, expected ${want.total}`);
  const expectedLines = want.postings + want.openings;
  if (lines.length !== expectedLines)
    report(`${lines.length} balance updates committed, expected ${expectedLines} (${duplicates} duplicates, ${missing} missing)`);
  return { ok: problems.length === 0, problems, committed: lines.length, finalTotal };
}

function countMissing(seen: ReadonlySet<string>, openings: number, transfers: number, report: (p: string) => void): number {
  let missing = 0;
  const need = (ref: string) => {
    if (seen.has(ref)) return;
    missing++;
    report(`${ref} was never committed`);
  };
  for (let a = 0; a < openings; a++) need(`o${a}`);
  for (let i = 0; i < transfers; i++) {
    need(`d${i}`);
    need(`c${i}`);
  }
  return missing;
}

/** Checks one account's chain of updates; returns its final balance. */
function checkAccount(account: number, updates: BalanceUpdate[], want: ExpectedLedger, report: (p: string) => void): number {
  updates.sort((x, y) => x.seq - y.seq);
  let balance = 0;
  for (let i = 0; i < updates.length; i++) {
    const u = updates[i]!;
    if (u.seq !== i + 1) {
      report(`account ${account}: update ${i + 1} has seq ${u.seq} (a gap or a repeat)`);
      return u.balance;
    }
    if (u.balance !== balance + u.delta) {
      report(`account ${account}: seq ${u.seq} balance ${u.balance} != previous ${balance} + delta ${u.delta}`);
      return u.balance;
    }
    balance = u.balance;
  }
  if (updates.length !== want.updates[account]) report(`account ${account}: ${updates.length} updates, expected ${want.updates[account]}`);
  if (balance !== want.balances[account]) report(`account ${account}: final balance ${balance}, expected ${want.balances[account]}`);
  return balance;
}
