/** Spawns the real `weir` command (node bin/weir.mjs) and collects its exit code and output. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = path.join(REPO, 'test/cli/fixtures');
/**
 * Timeout of a test that runs many `weir` commands: each starts Node and loads the CLI and the job
 * module, seconds apiece on a loaded machine (one such test took 51 s under `npm run test:loaded`).
 */
export const CLI_TEST_TIMEOUT_MS = 180_000;
/**
 * WEIR_HOME of every command this test file starts, so its job registry (`<WEIR_HOME>/jobs`) is its
 * own: tests never see another file's jobs or the user's.
 */
export const WEIR_HOME = mkdtempSync(path.join(os.tmpdir(), 'weir-home-test-'));
export const REGISTRY = path.join(WEIR_HOME, 'jobs');
process.on('exit', () => rmSync(WEIR_HOME, { recursive: true, force: true }));

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRun {
  readonly child: ChildProcess;
  readonly done: Promise<CliResult>;
  /** Resolves once stderr contains `text`. */
  waitForStderr(text: string): Promise<void>;
  /** What the command printed so far. */
  output(): { readonly stdout: string; readonly stderr: string };
}

export interface CliOptions {
  /** Working directory of the command (default: the repository). */
  readonly cwd?: string;
  /** Extra environment variables (WEIR_HOME defaults to this file's own). */
  readonly env?: Readonly<Record<string, string>>;
  /** Start the command in a process group of its own (kill it whole with `process.kill(-pid, ...)`). */
  readonly detached?: boolean;
  /** Run it inside this network namespace (`ip netns exec`, which execs: the child is the command itself). */
  readonly netns?: string;
}

export function startCli(args: readonly string[], options: CliOptions = {}): CliRun {
  const command = [process.execPath, path.join(REPO, 'bin/weir.mjs'), ...args];
  if (options.netns !== undefined) command.unshift('ip', 'netns', 'exec', options.netns);
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd ?? REPO,
    env: { ...process.env, NO_COLOR: '1', WEIR_HOME, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
    for (const w of [...waiters]) {
      if (stderr.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const waitForStderr = (text: string) => (stderr.includes(text) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ text, resolve })));
  return { child, done, waitForStderr, output: () => ({ stdout, stderr }) };
}

export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** The non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim().length > 0);
}
