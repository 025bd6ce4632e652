/**
 * `weir demo`: runs the bank-transfers example with checkpoints every second into a local
 * directory, crashes the ledger once part-way, lets the job recover on its own, and then checks the
 * committed output for exactly-once: every posting committed once, balances as expected, total unchanged.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readdir } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as bank from '../../examples/bank-transfers.ts';
import { InjectedFault, StreamEnvironment, readCommittedLines, type JobClient, type JobEvent } from '../index.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../runtime/faults.ts';
import { EXIT_JOB_FAILED, EXIT_OK, EXIT_SIGINT, UsageError } from './exit.ts';
import { groupDigits } from './format.ts';
import type { JobMaster } from '../internal.ts';
import type { WebListener, WebServer } from '../web/server.ts';
import { resolveStorageLocation } from '../storage/location.ts';
import { isUrlPath } from '../storage/paths.ts';
import { bindWebPort, webPortChoice } from './web-port.ts';
import { openDashboard } from './dashboard.ts';
import { newControlToken } from './job-registry.ts';
import { failureLine, finalStatusLine, superviseJob, type JobOutcome } from './supervise.ts';
import { keepAdvisorFigures } from './advisor-figures.ts';
import { verifyLedger } from './verify-ledger.ts';

export interface DemoFlags {
  readonly dir?: string;
  /** The dashboard's port (else WEIR_WEB_PORT, else an ephemeral port). */
  readonly webPort?: number;
}

const CHECKPOINT_INTERVAL_MS = 1000;
/** Share of the input read before the crash. */
const CRASH_AT = 0.4;

/** Throws once, on attempt 0, in the vertex holding `vertexPart`, once enough input was read and a checkpoint completed. */
export class CrashOnce implements FaultInjector {
  fired = false;
  private checkpointsCompleted = 0;
  private client: JobClient | null = null;

  constructor(
    private readonly vertexPart: string,
    private readonly recordsBeforeCrash: number,
  ) {}

  attach(client: JobClient): void {
    this.client = client;
  }

  onEvent(event: JobEvent): void {
    if (event.type === 'checkpoint-completed') this.checkpointsCompleted++;
  }

  check(site: FaultSite, ctx: FaultContext): void {
    if (this.fired || site !== 'process' || ctx.attempt !== 0 || !ctx.vertex.includes(this.vertexPart)) return;
    if (this.checkpointsCompleted < 1 || this.client === null) return;
    if (this.client.metrics().recordsIn < this.recordsBeforeCrash) return;
    this.fired = true;
    throw new InjectedFault('process');
  }
}

export async function demoCommand(flags: DemoFlags): Promise<number> {
  const root = await demoDir(flags.dir);
  // A directory of our own (no --dir) holds ~100k lines of output: it goes when the demo ends,
  // also when a second Ctrl-C exits at once (process.exit runs 'exit' listeners).
  const removeTemp = flags.dir === undefined ? () => rmSync(root, { recursive: true, force: true }) : () => {};
  process.once('exit', removeTemp);
  let web: WebListener | null = null;
  try {
    web = await bindWebPort(webPortChoice(flags.webPort));
    return await runDemo(root, web, flags.dir === undefined);
  } finally {
    await web?.close();
    removeTemp();
    process.off('exit', removeTemp);
  }
}

async function runDemo(root: string, web: WebListener | null, temporary: boolean): Promise<number> {
  const checkpointDir = path.join(root, 'checkpoints');
  const outputDir = path.join(root, 'output');
  const config = bank.DEFAULT_CONFIG;
  const out = process.stderr;
  out.write(
    `weir demo: ${config.accounts} accounts, ${config.transfers} transfers at ${config.ratePerSec}/s, parallelism ${bank.options.parallelism} in this thread, checkpoints every ${CHECKPOINT_INTERVAL_MS} ms, one crash injected at ~${CRASH_AT * 100}% of the input\n` +
      `weir demo: checkpoints in ${checkpointDir}, committed output in ${outputDir}\n`,
  );
  const env = StreamEnvironment.create({
    ...bank.options,
    checkpointStorage: checkpointDir,
    checkpointing: { ...bank.options.checkpointing, intervalMs: CHECKPOINT_INTERVAL_MS, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 200 },
    // In this thread: at 6,000 transfers/s the job takes about 15% of one core (measured 2026-12-01),
    // so worker threads would add only their start-up; and the crash comes from an in-thread fault injector.
    // Job modules default to worker threads so that a stuck user function cannot freeze the control
    // plane; this is Weir's own bank job, no user code, so nothing can get stuck on this thread.
    taskManagers: 'in-thread',
  });
  bank.buildJob(env, { outputDir, config });
  const crash = new CrashOnce('ledger', Math.floor(CRASH_AT * (config.transfers + config.accounts)));
  let master: JobMaster | null = null;
  let dashboard: Promise<WebServer | null> = Promise.resolve(null);
  const outcome = await superviseJob(
    env,
    bank.name,
    { faults: crash, onEvent: (e) => crash.onEvent(e), onJobMaster: (m) => (master = m) },
    {
      quiet: false,
      onStarted: (c, log) => {
        crash.attach(c);
        dashboard = openDashboard(c, master, newControlToken(), log, undefined, web);
      },
    },
  );
  out.write(`${finalStatusLine(outcome)}\n`);
  if (outcome.status !== 'FAILED') keepAdvisorFigures(env, outcome.result, master as JobMaster | null);
  const code = await verifyDemo(outcome, crash, outputDir, checkpointDir, temporary);
  await keepDashboardOpen(await dashboard);
  return code;
}

/**
 * On a terminal the dashboard stays open after the demo, so its checkpoints (the crash and the
 * recovery among them) can be replayed, until Ctrl-C; elsewhere (scripts, tests) it closes.
 */
async function keepDashboardOpen(dashboard: WebServer | null): Promise<void> {
  if (dashboard === null) return;
  if (process.stderr.isTTY === true && process.stdin.isTTY === true) {
    // The terminal goes raw before the line invites Ctrl-C: a key pressed at once must not reach
    // the terminal as SIGINT to npm's process group (npm start would exit 130).
    const pressed = ctrlC();
    process.stderr.write(`weir demo: the dashboard stays open at ${dashboard.address}/ to replay the checkpoints; press Ctrl-C to exit\n`);
    dashboard.hold();
    await pressed;
  }
  await dashboard.close();
}

/**
 * Resolves on Ctrl-C, read as a key: the terminal in raw mode sends no SIGINT to the process
 * group, so under `npm start` npm is not interrupted either and the exit code stays the demo's (0
 * once verified) instead of 130. A SIGINT or SIGTERM from elsewhere ends the wait too.
 */
function ctrlC(): Promise<void> {
  const stdin = process.stdin;
  return new Promise<void>((resolve) => {
    const done = () => {
      stdin.off('data', onKey);
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      stdin.setRawMode(false);
      stdin.pause();
      resolve();
    };
    const onKey = (key: Buffer) => {
      if (key.includes(0x03) || key.includes(0x04) || key.includes(0x71)) done(); // Ctrl-C, Ctrl-D, q
    };
    stdin.setRawMode(true);
    stdin.on('data', onKey);
    stdin.resume();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

async function verifyDemo(outcome: JobOutcome, crash: CrashOnce, outputDir: string, checkpointDir: string, temporary: boolean): Promise<number> {
  const out = process.stderr;
  const config = bank.DEFAULT_CONFIG;
  if (outcome.status === 'FAILED') {
    out.write(`${failureLine(outcome.error)}\n`);
    return EXIT_JOB_FAILED;
  }
  if (outcome.status === 'CANCELED') return EXIT_SIGINT;
  const want = bank.expected(config);
  const verdict = verifyLedger(readCommittedLines(outputDir), want, config.transfers);
  const problems = [...verdict.problems];
  if (!crash.fired) problems.push('the injected crash never happened, so recovery was not exercised');
  else if (outcome.result.restarts < 1) problems.push('the crash was injected but the job reports no restart');
  if (problems.length > 0) {
    for (const p of problems) out.write(`  ${p}\n`);
    out.write(`weir: demo verification failed: ${problems[0]} (output in ${outputDir})\n`);
    return EXIT_JOB_FAILED;
  }
  const restarts = outcome.result.restarts;
  const restored =
    outcome.restoredFrom === null ? 'restarted from the beginning: no checkpoint had completed' : `restored from checkpoint ${outcome.restoredFrom}`;
  process.stdout.write(
    `verified exactly-once: ${config.accounts} accounts, ${config.transfers} transfers, ${verdict.committed} balance updates ` +
      `(${want.postings} debits and credits + ${want.openings} openings) committed once each, ` +
      `total ${verdict.finalTotal} unchanged across ${restarts} restart${restarts === 1 ? '' : 's'} (${restored})\n`,
  );
  const kept = temporary ? '; this temporary directory is removed when the demo exits (keep one with --dir <dir>)' : '';
  out.write(
    `weir demo: inspect the retained checkpoint with: weir checkpoints ${checkpointDir}  (${groupDigits(verdict.committed)} lines in ${outputDir}${kept})\n`,
  );
  return EXIT_OK;
}

/** A fresh directory under the system temp dir, or the given one if it is empty or new. */
async function demoDir(dir: string | undefined): Promise<string> {
  if (dir === undefined) return mkdtemp(path.join(os.tmpdir(), 'weir-demo-'));
  const resolved = resolveStorageLocation(dir, '--dir');
  // The demo reads its output files back from its directory: a local one.
  if (isUrlPath(resolved)) throw new UsageError(`--dir ${resolved}: the demo needs a local directory, not a storage URL`);
  const abs = path.resolve(resolved);
  const entries = await readdir(abs).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw new UsageError(`--dir ${abs}: ${err.message}`);
  });
  if (entries.length > 0) throw new UsageError(`--dir ${abs} is not empty: the demo checks its output from scratch, give it a new or empty directory`);
  return abs;
}
