import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, expected, legsOf, transferAt, type BalanceUpdate, type BankConfig } from '../../examples/bank-transfers.ts';
import { humanBytes, oneLine, renderTable } from '../../src/cli/format.ts';
import { mergeOptions } from '../../src/cli/run-command.ts';
import { verifyLedger } from '../../src/cli/verify-ledger.ts';

describe('mergeOptions', () => {
  it('lets flags win over module options and retains checkpoints written to --checkpoint-dir', () => {
    const merged = mergeOptions(
      { parallelism: 2, checkpointing: { intervalMs: 1000, mode: 'at-least-once' } },
      { parallelism: 4, checkpointDir: '/tmp/c', checkpointInterval: 250 },
    );
    expect(merged).toEqual({
      parallelism: 4,
      checkpointStorage: '/tmp/c',
      checkpointing: { intervalMs: 250, mode: 'at-least-once', retention: 'retain-on-cancel' },
    });
  });

  it('keeps the retention the module chose, and leaves options alone without flags', () => {
    const module = { checkpointing: { retention: 'delete-on-cancel' as const } };
    expect(mergeOptions(module, { checkpointDir: '/tmp/c' }).checkpointing).toEqual({ retention: 'delete-on-cancel' });
    expect(mergeOptions(module, {})).toEqual(module);
  });
});

describe('format', () => {
  it('formats sizes, one-liners and tables', () => {
    expect(humanBytes(512)).toBe('512 B');
    expect(humanBytes(2583)).toBe('2.5 KiB');
    expect(oneLine('a\n  b\nc')).toBe('a | b | c');
    expect(renderTable(['A', 'BB'], [['xyz', '1']])).toBe('A    BB\nxyz  1\n');
  });
});

/** The updates a correct run commits, in a valid per-account order. */
function simulate(config: BankConfig): string[] {
  const acc = new Map<number, { balance: number; seq: number }>();
  const out: string[] = [];
  const apply = (account: number, delta: number, ref: string) => {
    const s = acc.get(account) ?? { balance: 0, seq: 0 };
    const next = { balance: s.balance + delta, seq: s.seq + 1 };
    acc.set(account, next);
    out.push(JSON.stringify({ account, seq: next.seq, balance: next.balance, delta, ref } satisfies BalanceUpdate));
  };
  for (let a = 0; a < config.accounts; a++) apply(a, config.initialBalance, `o${a}`);
  for (let i = 0; i < config.transfers; i++) for (const leg of legsOf(transferAt(i, config.seed, config.accounts))) apply(leg.account, leg.delta, leg.ref);
  return out;
}

describe('bank-transfers expected() and verifyLedger', () => {
  const config: BankConfig = { ...DEFAULT_CONFIG, accounts: 5, transfers: 300 };
  const want = expected(config);

  it('draws transfers deterministically between distinct accounts, keeping the total', () => {
    expect(transferAt(7, 1, 5)).toEqual(transferAt(7, 1, 5));
    for (let i = 0; i < 300; i++) {
      const t = transferAt(i, config.seed, 5);
      expect(t.from).not.toBe(t.to);
      expect(t.amount).toBeGreaterThanOrEqual(1);
    }
    expect(want.balances.reduce((a, b) => a + b, 0)).toBe(want.total);
    expect(want.updates.reduce((a, b) => a + b, 0)).toBe(want.postings + want.openings);
  });

  it('accepts a correct output', () => {
    const verdict = verifyLedger(simulate(config), want, config.transfers);
    expect(verdict.problems).toEqual([]);
    expect(verdict.committed).toBe(605);
    expect(verdict.finalTotal).toBe(want.total);
  });

  it('detects a duplicate and a loss', () => {
    const lines = simulate(config);
    expect(verifyLedger([...lines, lines[42]!], want, config.transfers).problems.join('\n')).toMatch(/committed more than once/);
    const lost = lines.filter((_, i) => i !== 100);
    const problems = verifyLedger(lost, want, config.transfers).problems.join('\n');
    expect(problems).toMatch(/was never committed/);
  });
});
