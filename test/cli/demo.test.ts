import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, runCli } from './run-cli.ts';

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
});
