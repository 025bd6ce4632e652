import { describe, expect, it } from 'vitest';
import { lines, runCli } from './run-cli.ts';

describe('weir demo', () => {
  it('crashes once, recovers and verifies exactly-once output', { timeout: 90_000 }, async () => {
    const r = await runCli(['demo']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('verified exactly-once');
    expect(r.stdout).toMatch(/across [1-9]\d* restarts? \(restored from checkpoint \d+\)/);
    expect(r.stderr).toMatch(/restarting: attempt 1 in 200 ms after failure: .*injected fault/);
    const dir = /checkpoints in (\S+),/.exec(r.stderr)?.[1];
    expect(dir).toBeDefined();
    const listed = await runCli(['checkpoints', dir!, '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBeGreaterThanOrEqual(1);
    expect(lines(r.stdout)).toHaveLength(1);
  });
});
