/**
 * Under `weir run`, a user function that never returns must not freeze the control
 * plane, whatever the parallelism. Each case runs the real `weir` command on a job whose map spins
 * for ever, then checks that the REST API answers, that `weir cancel` returns and that the process
 * ends CANCELED. Before the fix, parallelism 1 (and any job checkpointing to memory) ran the map on
 * the main thread: the REST request and the cancel never returned.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/jobs.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, lines, runCli } from './run-cli.ts';
import { startJob, waitForMatch, within } from './running-job.ts';

const DEFAULT_JOB = path.join(FIXTURES, 'spin-default-job.ts'); // no parallelism option
/** Generous bounds: a cancel that works ends in about cancellationTimeoutMs (1 s); a stuck one never does. */
const ANSWER_MS = 20_000;
const CANCEL_MS = 45_000;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'weir-stuck-'));
  dirs.push(d);
  return d;
}

/** Starts the spinning job with `flags`, checks REST and `weir cancel` answer while the map spins; returns the run's stderr. */
async function cancelWhileSpinning(flags: (chk: string) => string[]): Promise<string> {
  const dir = tempDir();
  const marker = path.join(dir, 'spinning');
  const job = await startJob([DEFAULT_JOB, ...flags(path.join(dir, 'chk'))], { env: { SPIN_MARKER: marker } });
  try {
    const dashboard = await waitForMatch(job.cli, /^dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ \(job /m, 30_000, "the 'dashboard:' line");
    await until('the map to spin', () => existsSync(marker), 60_000);
    const rest = await within(
      ANSWER_MS,
      fetch(`${dashboard[1]}/jobs/${job.jobId}`, { signal: AbortSignal.timeout(ANSWER_MS) }).then((r) => r.json() as Promise<{ state: string }>),
      () => 'the REST API did not answer while the map spins',
    );
    expect(rest.state).toBe('RUNNING');
    const cancelled = await within(CANCEL_MS, runCli(['cancel', job.jobId]), () => `weir cancel did not return; stderr:\n${job.cli.output().stderr}`);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stderr).toContain(`cancelled job ${job.jobId}`);
    const run = await within(CANCEL_MS, job.cli.done, () => `weir run did not end after weir cancel; stderr:\n${job.cli.output().stderr}`);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toMatch(/task manager \d did not stop its subtasks within cancellationTimeoutMs \(1000 ms\): terminated/);
    expect(lines(run.stderr).at(-1)).toMatch(/^CANCELED \| job spin-/);
    return run.stderr;
  } finally {
    job.cli.child.kill('SIGKILL');
  }
}

describe('a user function stuck under weir run leaves the control plane answering', () => {
  it(
    'parallelism 1 (no parallelism option, no flags): the map runs on one worker task manager; REST answers, weir cancel returns, exit 130',
    async () => {
      const stderr = await cancelWhileSpinning(() => []);
      expect(stderr).toContain('parallelism 1, on 1 task manager (worker thread)');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'parallelism 1 with --checkpoint-dir: the same',
    async () => {
      const stderr = await cancelWhileSpinning((chk) => ['--checkpoint-dir', chk]);
      expect(stderr).toContain('parallelism 1, on 1 task manager (worker thread)');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'parallelism 2 (-p 2, checkpoints in memory): on worker task managers too; REST answers, weir cancel returns, exit 130',
    async () => {
      const stderr = await cancelWhileSpinning(() => ['-p', '2']);
      expect(stderr).toMatch(/parallelism 2, on [12] task managers? \(worker threads?/);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
