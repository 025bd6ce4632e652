/** Starts `weir run` in the background and waits, bounded, for its control endpoint line. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { until } from '../support/jobs.ts';
import { REGISTRY, startCli, type CliOptions, type CliRun } from './run-cli.ts';

export interface RunningJob {
  readonly cli: CliRun;
  readonly jobId: string;
  readonly address: string;
}

const CONTROL_RE = /^control: (http:\/\/127\.0\.0\.1:\d+) \(job ([A-Za-z0-9._-]+)\)$/m;

/** Rejects with `message()` when `promise` has not settled within `ms`. */
export async function within<T>(ms: number, promise: Promise<T>, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once stderr matches `re`; rejects if the command exits first or after `ms`. */
export async function waitForMatch(cli: CliRun, re: RegExp, ms: number, what: string): Promise<RegExpExecArray> {
  const found = (async () => {
    for (;;) {
      const m = re.exec(cli.output().stderr);
      if (m) return m;
      const exited = await Promise.race([cli.done.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 25))]);
      if (exited) {
        const again = re.exec(cli.output().stderr);
        if (again) return again;
        throw new Error(`weir exited before ${what}; stderr:\n${cli.output().stderr}`);
      }
    }
  })();
  return within(ms, found, () => `no ${what} within ${ms} ms; stderr so far:\n${cli.output().stderr}`);
}

/** `weir run <args>` in the background, once its control endpoint listens. */
export async function startJob(args: readonly string[], options: CliOptions = {}): Promise<RunningJob> {
  const cli = startCli(['run', ...args], options);
  try {
    // Bounded generously: on a loaded machine loading the job module through tsx takes seconds.
    const m = await waitForMatch(cli, CONTROL_RE, 30_000, "the 'control:' line");
    return { cli, address: m[1]!, jobId: m[2]! };
  } catch (err) {
    cli.child.kill('SIGKILL');
    throw err;
  }
}

/**
 * Resolves once the job's control endpoint reports RUNNING. The endpoint answers from the start,
 * while the job is still CREATED: its task manager's worker thread is loading Weir and the job
 * module (seconds on a loaded machine).
 */
export async function untilRunning(job: RunningJob, ms = 60_000): Promise<void> {
  const entry = JSON.parse(readFileSync(path.join(REGISTRY, `${job.jobId}.json`), 'utf8')) as { token: string };
  const headers = { authorization: `Bearer ${entry.token}` };
  await until(
    `job ${job.jobId} to be RUNNING`,
    async () => ((await (await fetch(new URL('/status', job.address), { headers })).json()) as { status?: string }).status === 'RUNNING',
    ms,
  );
}
