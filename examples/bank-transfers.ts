/**
 * Bank transfers: money moves between accounts and the total must never change.
 *
 * Two generated, deterministic sources: account openings (the initial balances) and transfers
 * {id, from, to, amount}. Each transfer is split into a debit leg keyed by `from` and a credit leg
 * keyed by `to`; a keyed two-input operator ("ledger") holds each account's balance in ValueState
 * and emits a balance update per leg or opening to an exactly-once FileSink.
 *
 * Run it:   npx weir run examples/bank-transfers.ts --checkpoint-dir /tmp/bank   (about 32 s)
 * Output:   committed lines go to $WEIR_OUTPUT_DIR, or <checkpoint-dir>/bank-transfers-output, or
 *           <tmpdir>/weir-bank-transfers-output with in-memory checkpoints. The directory is kept
 *           across runs so that `--from` continues the same output; clear it before a fresh run.
 * Verify:   when the job finishes, `weir run` calls `onFinished`, which checks the committed output
 *           of every run into that directory together (a run stopped with a savepoint and its
 *           resumption) against `expected`. `weir demo` runs it with a crash part-way instead.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import {
  FileSink,
  readCommittedLines,
  ValueStateDescriptor,
  uniformAt,
  type KeyedCoProcessFunction,
  type StreamEnvironment,
  type StreamEnvironmentOptions,
  type ValueState,
} from 'weir-stream';

export const name = 'bank-transfers';

export const options: StreamEnvironmentOptions = {
  parallelism: 2,
  checkpointing: { intervalMs: 1000 },
};

export interface BankConfig {
  readonly accounts: number;
  readonly initialBalance: number;
  readonly transfers: number;
  /** Transfers per second over all source subtasks. */
  readonly ratePerSec: number;
  readonly seed: number;
}

/** About 8 s of transfers at 6,000/s. */
export const DEFAULT_CONFIG: BankConfig = { accounts: 12, initialBalance: 100_000, transfers: 48_000, ratePerSec: 6_000, seed: 20_240_917 };

/**
 * The same transfers at 1,500/s (about 32 s) under `weir run`, so a person has time to take a
 * savepoint and stop the job from another terminal. The rate does not change the result.
 */
export const RUN_CONFIG: BankConfig = { ...DEFAULT_CONFIG, ratePerSec: 1_500 };

export interface Transfer {
  readonly id: number;
  readonly from: number;
  readonly to: number;
  readonly amount: number;
}

export interface Opening {
  readonly account: number;
  readonly amount: number;
}

/** One leg of a transfer: a debit (negative delta) or a credit. */
export interface Posting {
  readonly account: number;
  readonly delta: number;
  /** `d<id>` for the debit of transfer id, `c<id>` for its credit. */
  readonly ref: string;
}

/** What the ledger emits for every posting or opening it applies. */
export interface BalanceUpdate {
  readonly account: number;
  /** 1, 2, 3, ... per account: how many changes the balance has seen. */
  readonly seq: number;
  readonly balance: number;
  readonly delta: number;
  /** The posting's ref, or `o<account>` for the opening. */
  readonly ref: string;
}

/** Transfer i: pure in (seed, i), so every replay and `expected` see the same one. */
export function transferAt(index: number, seed: number, accounts: number): Transfer {
  const from = Math.floor(uniformAt(seed, index, 1) * accounts);
  const to = (from + 1 + Math.floor(uniformAt(seed, index, 2) * (accounts - 1))) % accounts;
  const amount = 1 + Math.floor(uniformAt(seed, index, 3) * 100);
  return { id: index, from, to, amount };
}

export function openingAt(index: number, config: BankConfig): Opening {
  return { account: index, amount: config.initialBalance };
}

export function legsOf(t: Transfer): [Posting, Posting] {
  return [
    { account: t.from, delta: -t.amount, ref: `d${t.id}` },
    { account: t.to, delta: t.amount, ref: `c${t.id}` },
  ];
}

export interface ExpectedLedger {
  /** Final balance per account. */
  readonly balances: readonly number[];
  /** Balance updates per account: its opening plus every leg touching it. */
  readonly updates: readonly number[];
  readonly total: number;
  /** Debit and credit legs: twice the transfers. */
  readonly postings: number;
  readonly openings: number;
}

/** The exact end state of the job, computed from the same generator functions. */
export function expected(config: BankConfig = DEFAULT_CONFIG): ExpectedLedger {
  const balances = new Array<number>(config.accounts).fill(0);
  const updates = new Array<number>(config.accounts).fill(0);
  for (let a = 0; a < config.accounts; a++) {
    const o = openingAt(a, config);
    balances[o.account]! += o.amount;
    updates[o.account]!++;
  }
  for (let i = 0; i < config.transfers; i++) {
    for (const leg of legsOf(transferAt(i, config.seed, config.accounts))) {
      balances[leg.account]! += leg.delta;
      updates[leg.account]!++;
    }
  }
  return { balances, updates, total: config.accounts * config.initialBalance, postings: 2 * config.transfers, openings: config.accounts };
}

interface Account {
  readonly balance: number;
  readonly seq: number;
}

/** The ledger: postings on input 1, openings on input 2, one balance per account in keyed state. */
function ledger(): KeyedCoProcessFunction<number, Posting, Opening, BalanceUpdate> {
  let account: ValueState<Account>;
  const apply = (id: number, delta: number, ref: string): BalanceUpdate => {
    const current = account.value() ?? { balance: 0, seq: 0 };
    const next: Account = { balance: current.balance + delta, seq: current.seq + 1 };
    account.update(next);
    return { account: id, seq: next.seq, balance: next.balance, delta, ref };
  };
  return {
    open(ctx) {
      account = ctx.getState(new ValueStateDescriptor<Account>('account'));
    },
    processElement1(posting, _ctx, out) {
      out.collect(apply(posting.account, posting.delta, posting.ref));
    },
    processElement2(opening, _ctx, out) {
      out.collect(apply(opening.account, opening.amount, `o${opening.account}`));
    },
  };
}

export interface BankJobOptions {
  readonly outputDir: string;
  readonly config?: BankConfig;
}

/** Adds the job to `env`. The vertex holding the ledger has 'ledger' in its name. */
export function buildJob(env: StreamEnvironment, job: BankJobOptions): void {
  const config = job.config ?? DEFAULT_CONFIG;
  const openings = env
    .generate({ count: config.accounts, seed: config.seed }, (i) => openingAt(i, config))
    .setParallelism(1)
    .uid('openings')
    .name('openings');
  env
    .generate({ count: config.transfers, ratePerSec: config.ratePerSec, seed: config.seed }, (i, seed) => transferAt(i, seed, config.accounts))
    .uid('transfers')
    .name('transfers')
    .flatMap<Posting>((t, out) => {
      for (const leg of legsOf(t)) out.collect(leg);
      return undefined;
    })
    .uid('split-legs')
    .name('split-legs')
    .keyBy((p) => p.account)
    .connect(openings.keyBy((o) => o.account))
    .process(ledger)
    .uid('ledger')
    .name('ledger')
    .sinkTo(new FileSink({ directory: job.outputDir }))
    .uid('balances')
    .name('balances');
}

export function defaultOutputDir(env: StreamEnvironment): string {
  const fromEnv = process.env.WEIR_OUTPUT_DIR;
  if (fromEnv) return path.resolve(fromEnv);
  const storage = env.options.checkpointStorage;
  if (storage !== 'memory' && !storage.startsWith('memory:')) return path.resolve(storage, 'bank-transfers-output');
  return path.join(os.tmpdir(), 'weir-bank-transfers-output');
}

/**
 * Builds the job, and nothing else: weir calls it wherever the job is built (every task manager,
 * every process `weir sim` simulates, its fault-free run too, where the sink is replaced), so a
 * line printed here came out once per build and named a directory the simulator never writes.
 * `onFinished` names the output directory instead.
 */
export default function bankTransfers(env: StreamEnvironment): void {
  buildJob(env, { outputDir: defaultOutputDir(env), config: RUN_CONFIG });
}

/** Final balances read from committed balance updates, checked against `expected`. */
export interface LedgerSummary {
  readonly updates: number;
  readonly total: number;
  /** Empty when every update was committed once and every final balance is the expected one. */
  readonly problems: readonly string[];
}

export function summarizeLedger(lines: readonly string[], config: BankConfig): LedgerSummary {
  const want = expected(config);
  const refs = new Set<string>();
  const last = new Map<number, BalanceUpdate>();
  const counts = new Array<number>(config.accounts).fill(0);
  const problems: string[] = [];
  for (const line of lines) {
    const u = JSON.parse(line) as BalanceUpdate;
    if (refs.has(u.ref)) problems.push(`${u.ref} committed more than once`);
    refs.add(u.ref);
    counts[u.account] = (counts[u.account] ?? 0) + 1;
    if ((last.get(u.account)?.seq ?? 0) < u.seq) last.set(u.account, u);
  }
  let total = 0;
  for (let a = 0; a < config.accounts; a++) {
    const balance = last.get(a)?.balance ?? 0;
    total += balance;
    if (balance !== want.balances[a]) problems.push(`account ${a}: final balance ${balance}, expected ${want.balances[a]}`);
    if (counts[a] !== want.updates[a]) problems.push(`account ${a}: ${counts[a]} updates, expected ${want.updates[a]}`);
  }
  return { updates: lines.length, total, problems };
}

/**
 * Called by `weir run` after the job FINISHED: reads the committed output of every run into the
 * output directory together and says whether the final balances are the expected ones.
 */
export function onFinished(ctx: { env: StreamEnvironment; stoppedWithSavepoint: string | null }): string {
  const config = RUN_CONFIG;
  const dir = defaultOutputDir(ctx.env);
  const lines = readCommittedLines(dir);
  const want = expected(config);
  const all = want.postings + want.openings;
  if (ctx.stoppedWithSavepoint !== null) {
    return `bank-transfers: stopped with a savepoint after ${lines.length} of ${all} balance updates (in ${dir}); resume from it to finish`;
  }
  const s = summarizeLedger(lines, config);
  if (s.problems.length > 0) {
    const earlier = s.updates > all ? ` (${dir} also holds output of an earlier run: clear it before a fresh run)` : '';
    throw new Error(
      `final balances do not match the expected ones: ${s.problems[0]}${s.problems.length > 1 ? ` and ${s.problems.length - 1} more` : ''}${earlier}`,
    );
  }
  return `final balances: ${config.accounts} accounts, total ${s.total}, all equal to the expected balances (${s.updates} balance updates in ${dir}, each committed once)`;
}

/**
 * For `weir sim --job examples/bank-transfers.ts`. A balance update's `seq` and `balance` depend on
 * how postings and openings of an account interleave, which faults change, so the committed lines
 * legitimately differ from the fault-free run's. What exactly-once promises is checked instead:
 * every posting and opening (its `ref`) is committed once (at least once under at-least-once), and
 * each account's updates, in commit order, form one consistent history: seq 1, 2, 3, ..., each
 * balance the previous one plus its delta, ending at the fault-free run's final balance.
 */
export function simCheck(
  committed: Readonly<Record<string, readonly unknown[]>>,
  oracle: Readonly<Record<string, readonly unknown[]>>,
  guarantee: 'exactly-once' | 'at-least-once',
): string[] {
  const got = (committed.balances ?? []) as readonly BalanceUpdate[];
  const want = (oracle.balances ?? []) as readonly BalanceUpdate[];
  const problems = checkRefs(got, want, guarantee);
  if (guarantee === 'exactly-once') problems.push(...checkHistories(got, want));
  return problems.slice(0, 10);
}

function checkRefs(got: readonly BalanceUpdate[], want: readonly BalanceUpdate[], guarantee: 'exactly-once' | 'at-least-once'): string[] {
  const counts = new Map<string, number>();
  for (const u of got) counts.set(u.ref, (counts.get(u.ref) ?? 0) + 1);
  const problems: string[] = [];
  for (const u of want) {
    const n = counts.get(u.ref) ?? 0;
    if (n === 0) problems.push(`${u.ref} (account ${u.account}) was never committed`);
    else if (n > 1 && guarantee === 'exactly-once') problems.push(`${u.ref} (account ${u.account}) committed ${n} times`);
    counts.delete(u.ref);
  }
  for (const ref of counts.keys()) problems.push(`${ref} committed but the fault-free run has no such posting`);
  return problems;
}

function checkHistories(got: readonly BalanceUpdate[], want: readonly BalanceUpdate[]): string[] {
  const finalWanted = new Map<number, number>();
  for (const u of want) finalWanted.set(u.account, u.balance);
  const last = new Map<number, { seq: number; balance: number }>();
  const problems: string[] = [];
  for (const u of got) {
    const prev = last.get(u.account) ?? { seq: 0, balance: 0 };
    if (u.seq !== prev.seq + 1) problems.push(`account ${u.account}: update ${u.ref} has seq ${u.seq} after seq ${prev.seq}`);
    else if (u.balance !== prev.balance + u.delta) problems.push(`account ${u.account}: update ${u.ref} makes ${prev.balance} + ${u.delta} into ${u.balance}`);
    last.set(u.account, { seq: u.seq, balance: u.balance });
  }
  for (const [account, balance] of finalWanted) {
    const ended = last.get(account)?.balance;
    if (ended !== balance) problems.push(`account ${account}: final balance ${ended ?? 'none'}, the fault-free run ends at ${balance}`);
  }
  return problems;
}
