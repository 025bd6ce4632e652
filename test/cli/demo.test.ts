import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, REPO, runCli, WEIR_HOME } from './run-cli.ts';

/**
 * Runs `npm start` (the demo) on a terminal (util-linux `script` gives it a pty), presses Ctrl-C
 * once the dashboard is held open, and resolves with the exit code and what it printed.
 */
function demoOnTerminal(tmpdir: string): Promise<{ code: number | null; output: string }> {
  const child = spawn('script', ['-qefc', 'npm start', '/dev/null'], {
    cwd: REPO,
    env: { ...process.env, TMPDIR: tmpdir, WEIR_HOME, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let pressed = false;
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    output += s;
    if (!pressed && output.includes('press Ctrl-C to exit')) {
      pressed = true;
      child.stdin.write('\x03');
    }
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe('weir demo', () => {
  it('crashes once, recovers and verifies exactly-once output', { timeout: 90_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'weir-demo-test-'));
    try {
      const r = await runCli(['demo', '--dir', dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('verified exactly-once');
      expect(r.stdout).toMatch(/across [1-9]\d* restarts? \(restored from checkpoint \d+\)/);
      expect(lines(r.stdout)).toHaveLength(1);
      expect(r.stderr).toMatch(/restarting: attempt 1 in 200 ms after failure: .*injected fault/);
      const listed = await runCli(['checkpoints', path.join(dir, 'checkpoints'), '--json']);
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as Array<{ status: string }>).some((l) => l.status === 'complete')).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('npm start removes its temporary directory, and exits 0 on Ctrl-C after a verified demo on a terminal', { timeout: 120_000 }, async () => {
    // Before: Ctrl-C went to the whole process group (npm start exited 130) and ~100k lines stayed in /tmp/weir-demo-*.
    const tmpdir = await mkdtemp(path.join(os.tmpdir(), 'weir-demo-tmp-'));
    try {
      const r = await demoOnTerminal(tmpdir);
      expect(r.code, r.output).toBe(0);
      expect(r.output).toContain('verified exactly-once');
      expect(r.output).toContain(`checkpoints in ${tmpdir}/weir-demo-`);
      expect(await readdir(tmpdir)).toEqual([]);
    } finally {
      await rm(tmpdir, { recursive: true, force: true });
    }
  });
});
