/**
 * Task managers as processes over TCP on this host (loopback): `weir run --task-manager-processes`,
 * `weir run --listen` with `weir taskmanager --connect` processes that join, one joining late, one
 * SIGKILLed while a checkpoint is being written (the job recovers on the survivor and a replacement),
 * a wrong token and a changed module refused, task managers that end when their job master is gone.
 * Outputs are checked with the kill oracle (every line exactly once, in order per key). The same
 * scenarios across network namespaces: test/cli/tcp-hosts.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointMoment, KILL_JOB } from './kill-harness.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, REPO, runCli, startCli, WEIR_HOME, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

const started: CliRun[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
});

function start(args: readonly string[], env: Readonly<Record<string, string>> = {}, cwd?: string): CliRun {
  const cli = startCli(args, { env, ...(cwd === undefined ? {} : { cwd }) });
  started.push(cli);
  return cli;
}

/** The address a `weir run --listen host:0` job master printed. */
async function listening(jm: CliRun): Promise<string> {
  const m = await waitForMatch(jm, /job master listening at (\S+); join with/, 60_000, 'the listening line');
  return m[1]!;
}

describe('weir run on task manager processes over TCP (loopback)', () => {
  it(
    '--task-manager-processes 2 runs the kill job on two processes it starts, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const r = await runCli(['run', KILL_JOB, '--task-manager-processes', '2', '--checkpoint-dir', root], { env: { KILL_RATE: '20000' } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('parallelism 2, on 2 task manager processes over TCP');
      expect(r.stderr).toMatch(/task manager tm-\d \(.*pid \d+.*\) joined with 2 slots/);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'waits for task managers that join (one late), survives one SIGKILLed while a checkpoint is written, and its task managers exit once it is gone',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const env = { KILL_RATE: '3000', KILL_PAD_BYTES: '20000', KILL_INTERVAL_MS: '100' };
      const jm = start(['run', KILL_JOB, '--listen', '127.0.0.1:0', '--task-managers', '2', '--checkpoint-dir', root], env);
      const address = await listening(jm);
      await jm.waitForStderr('waiting for task managers: 0 of 2 registered');
      const first = start(['taskmanager', '--connect', address, '--slots', '2'], env);
      await within(60_000, jm.waitForStderr('waiting for task managers: 1 of 2 registered'), () => jm.output().stderr);
      // The job waits for the second: nothing deployed yet.
      expect(jm.output().stderr).not.toContain('pool 1');
      const late = start(['taskmanager', '--connect', address, '--slots', '2'], env);
      const jobDir = path.join(root, (await waitForMatch(jm, /^control: \S+ \(job ([A-Za-z0-9._-]+)\)$/m, 60_000, 'the control line'))[1]!);
      expect(await checkpointMoment(jm, jobDir, 'during', 3, 60_000)).toBe(true);
      late.child.kill('SIGKILL');
      // A replacement joins; the survivor registers again after its pool was released.
      const replacement = start(['taskmanager', '--connect', address, '--slots', '2'], env);
      const done = await within(120_000, jm.done, () => `the job did not finish; stderr:\n${jm.output().stderr}`);
      expect(done.code, done.stderr).toBe(0);
      // The job master hears of the death from the closed control connection, or first from the
      // survivor, whose subtasks fail as their data connection to the dead one breaks.
      expect(done.stderr).toMatch(/restarting: attempt 1 .*(task manager tm-2 .*connection closed|data connection to task manager \d lost)/);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
      // The job master is gone: the task managers that still run end by themselves.
      for (const tm of [first, replacement]) {
        const end = await within(30_000, tm.done, () => `a task manager did not exit; stderr:\n${tm.output().stderr}`);
        expect(end.code, end.stderr).toBe(0);
        expect(end.stderr).toContain('is gone; exiting');
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a data connection between two task managers that breaks (ss -K) fails the attempt over onto a new pool, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const env = { KILL_RATE: '3000', KILL_INTERVAL_MS: '100' };
      const jm = start(['run', KILL_JOB, '--listen', '127.0.0.1:0', '--task-managers', '2', '--checkpoint-dir', root], env);
      const address = await listening(jm);
      start(['taskmanager', '--connect', address, '--slots', '1'], env);
      start(['taskmanager', '--connect', address, '--slots', '1'], env);
      const m = await waitForMatch(jm, /^dashboard: (http:\/\/\S+)\/ \(job ([A-Za-z0-9._-]+);/m, 60_000, 'the dashboard line');
      const jobDir = path.join(root, m[2]!);
      expect(await checkpointMoment(jm, jobDir, 'after-complete', 3, 60_000)).toBe(true);
      const listed = (await (await fetch(`${m[1]}/jobs/${m[2]}/taskmanagers`)).json()) as { taskmanagers: Array<{ dataAddress: string | null }> };
      // The data listener of task manager 0: only task manager 1's data connection reaches it.
      const port = Number(listed.taskmanagers[0]!.dataAddress!.split(':').at(-1));
      execFileSync('ss', ['-K', 'dst', '127.0.0.1', 'dport', '=', String(port)]);
      const done = await within(120_000, jm.done, () => `the job did not finish; stderr:\n${jm.output().stderr}`);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stderr).toMatch(/restarting: attempt 1 .*(data connection to task manager \d lost|connection closed)/);
      expect(done.stderr).toContain('running attempt 1');
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'refuses a task manager with a wrong token, and one whose copy of the job module differs (--same-path); both say why and exit 1',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-module-'));
      const module = path.join(dir, 'tiny-job.ts');
      copyFileSync(path.join(FIXTURES, 'tiny-job.ts'), module);
      // Outside the repository, 'weir-stream' resolves through node_modules as in a user's project.
      mkdirSync(path.join(dir, 'node_modules'));
      symlinkSync(REPO, path.join(dir, 'node_modules', 'weir-stream'));
      const jm = start(['run', module, '--listen', '127.0.0.1:0', '--same-path', '--registration-timeout', '60000', '--checkpoint-dir', root]);
      const address = await listening(jm);
      const wrong = await runCli(['taskmanager', '--connect', address], { env: { WEIR_CLUSTER_TOKEN: 'not-the-token-of-this-cluster' } });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('wrong cluster token');
      // The module's code changes after the job master hashed it (a comment would not: the hash is of
      // the bundled code): a task manager loading it here is refused.
      appendFileSync(module, '\nexport const changedAfterTheJobMasterStarted = true;\n');
      const changed = await runCli(['taskmanager', '--connect', address]);
      expect(changed.code).toBe(1);
      expect(changed.stderr).toContain(`job module ${module} differs from the job master's`);
      await within(30_000, jm.waitForStderr('cannot run this job'), () => jm.output().stderr);
      jm.child.kill('SIGINT');
      await jm.done;
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it.skipIf(process.getuid?.() !== 0)(
    'refuses a task manager that does not see the checkpoint directory the job master wrote (a tmpfs over it, in a mount namespace of its own), naming it; the job master removes its probes when it ends',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const jm = start(['run', KILL_JOB, '--listen', '127.0.0.1:0', '--registration-timeout', '60000', '--checkpoint-dir', root]);
      const address = await listening(jm);
      const probes = () => readdirSync(root, { recursive: true }).filter((f) => String(f).includes('.weir-shared-'));
      expect(probes().length).toBe(2); // the job's checkpoint directory and the FileSink's (below it)
      // Another "host": its own mount namespace, where an empty file system hides the shared directory.
      const other = spawn(
        'unshare',
        [
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          'mount -t tmpfs tmpfs "$0" && exec "$1" "$2" taskmanager --connect "$3"',
          root,
          process.execPath,
          path.join(REPO, 'bin/weir.mjs'),
          address,
        ],
        { env: { ...process.env, NO_COLOR: '1', WEIR_HOME }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      other.stderr!.setEncoding('utf8').on('data', (t: string) => (stderr += t));
      const code = await new Promise<number | null>((resolve) => other.on('close', resolve));
      expect(code, stderr).toBe(1);
      expect(stderr).toMatch(
        /the checkpoint directory \S+ is not the directory the job master wrote to \(its probe \.weir-shared-\S+ cannot be read here: ENOENT/,
      );
      expect(stderr).toContain('every host sees at the same path');
      await within(30_000, jm.waitForStderr('cannot run this job'), () => jm.output().stderr);
      jm.child.kill('SIGINT');
      await jm.done;
      expect(probes()).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'refuses a FileSink directory the job master cannot reach, naming the sink, before it listens',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const notADir = path.join(root, 'a-file');
      writeFileSync(notADir, 'x');
      const r = await runCli(['run', KILL_JOB, '--listen', '127.0.0.1:0', '--checkpoint-dir', root], { env: { KILL_OUTPUT: path.join(notADir, 'out') } });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/FileSink\.directory: directory of FileSink '[^']+' \S+ cannot be created/);
      expect(r.stderr).not.toContain('listening');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a task manager process stuck in user code ends itself once the job master has given up on it; the job master starts another process and the job goes on',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const marker = path.join(root, 'spinning');
      // Declared dead after 1.5 s of silence; the process's own watchdog fires at 1.5 s + 1 s (cancellationTimeoutMs).
      const jm = start(['run', path.join(FIXTURES, 'spin-job.ts'), '--task-manager-processes', '2', '--checkpoint-dir', path.join(root, 'ck')], {
        SPIN_MARKER: marker,
        SPIN_HEARTBEAT_TIMEOUT_MS: '1500',
      });
      const ended = await waitForMatch(
        jm,
        /weir taskmanager \(pid (\d+)\): its thread has not run for (\d+) ms \(limit 2500 ms: heartbeat\.timeoutMs \+ cancellationTimeoutMs\)/,
        60_000,
        'the stuck process ending itself',
      );
      expect(Number(ended[2])).toBeGreaterThan(2_500);
      const out = () => jm.output().stderr;
      expect(out()).toMatch(/task manager 0 died: no heartbeat answered for \d+ ms \(heartbeat\.timeoutMs 1500\)|task manager 1 died: no heartbeat answered/);
      await waitForMatch(jm, new RegExp(`task manager process ${ended[1]} was killed \\(SIGKILL\\); starting another`), 30_000, 'the replacement');
      await waitForMatch(jm, /running attempt 1, restored from checkpoint \d+/, 60_000, 'the restored attempt');
      let killed = false;
      try {
        process.kill(Number(ended[1]), 0);
      } catch {
        killed = true;
      }
      expect(killed).toBe(true);
      jm.child.kill('SIGINT');
      await jm.done;
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a task manager whose copy of the job builds another graph (the module reads its environment) is refused at the deploy, the error naming the difference',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-tcp-'));
      const jm = start(['run', path.join(FIXTURES, 'env-graph-job.ts'), '--listen', '127.0.0.1:0', '--checkpoint-dir', root]);
      const address = await listening(jm);
      const tm = start(['taskmanager', '--connect', address], { GRAPH_EXTRA_MAP: '1' });
      const r = await within(60_000, jm.done, () => jm.output().stderr);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(
        /task manager 0 built a different job graph than the job master: uid 'extra' \(vertex 0, '[^']+'\) is unknown to the job master/,
      );
      // Once its job master is gone, the task manager ends too.
      await within(30_000, tm.done, () => tm.output().stderr);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'refuses memory checkpoint storage with task managers over TCP, naming the option',
    async () => {
      const r = await runCli(['run', KILL_JOB, '--task-manager-processes', '1']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("checkpointStorage: 'memory' checkpoint storage lives in the job master's process");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
