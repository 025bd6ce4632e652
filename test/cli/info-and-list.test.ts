import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_HELP } from '../../src/cli/exit.ts';
import { FIXTURES, lines, REPO, runCli } from './run-cli.ts';
import { startJob, untilRunning, within } from './running-job.ts';

describe('weir --version, weir help and weir list', () => {
  it('--version prints the version of package.json and exits 0', async () => {
    const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it('weir help <command> exits 0 with the same text as <command> --help; an unknown topic is a usage error', async () => {
    const [help, dashHelp, unknown, main] = await Promise.all([
      runCli(['help', 'run']),
      runCli(['run', '--help']),
      runCli(['help', 'nope']),
      runCli(['--help']),
    ]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: weir run [options] <job-module>');
    expect(help.stdout).toBe(dashHelp.stdout);
    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual(["weir: help: unknown command 'nope' (see 'weir --help')"]);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('list [options]');
    // Every exit code is documented in the help, each once.
    const documented = [...main.stdout.slice(main.stdout.indexOf('Exit codes:')).matchAll(/^ {2}(\d+) +\S/gm)].map((m) => Number(m[1]));
    expect(documented).toEqual(EXIT_CODE_HELP.map(([code]) => code));
    expect(new Set(documented).size).toBe(documented.length);
  });

  it('weir list shows the running job (id, name, state, control address, start) and nothing once it ended', async () => {
    const before = await runCli(['list']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toBe('');
    expect(before.stderr).toMatch(/^no running jobs \(registry: .*weir-home-test-.*\/jobs\)\n$/);

    const job = await startJob([path.join(FIXTURES, 'slow-job.ts'), '--quiet']);
    try {
      await untilRunning(job);
      const table = await runCli(['list']);
      expect(table.code, table.stderr).toBe(0);
      const [header, row, ...rest] = lines(table.stdout);
      expect(header!.split(/\s+/)).toEqual(['JOB', 'NAME', 'STATE', 'CONTROL', 'STARTED', 'HA']);
      expect(rest).toEqual([]);
      const [id, name, state, address, started] = row!.split(/\s+/);
      expect({ id, name, state, address }).toEqual({ id: job.jobId, name: 'slow', state: 'RUNNING', address: job.address });
      expect(new Date(started!).toISOString()).toBe(started);

      const json = await runCli(['list', '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual([
        {
          jobId: job.jobId,
          name: 'slow',
          state: 'RUNNING',
          address: job.address,
          pid: job.cli.child.pid,
          module: path.join(FIXTURES, 'slow-job.ts'),
          startedAt: started,
        },
      ]);
      expect(json.stdout).not.toContain('token');

      expect((await runCli(['cancel', 'slow'])).code).toBe(0);
      const run = await within(15_000, job.cli.done, () => `weir run did not end after weir cancel; stderr:\n${job.cli.output().stderr}`);
      expect(run.code, run.stderr).toBe(130);
    } finally {
      job.cli.child.kill('SIGKILL');
    }
    const after = await runCli(['list', '--json']);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual([]);
  });
});
