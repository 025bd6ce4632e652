import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, runCli } from './run-cli.ts';

describe('weir run with task managers (issue 11)', () => {
  it('runs a job module whose options ask for two task managers in worker threads, exactly once', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const r = await runCli(['run', path.join(FIXTURES, 'tm-counts-job.ts'), '--checkpoint-dir', chk], { env: { COUNTS_RATE: '20000' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('parallelism 2, on 2 task managers (worker threads)');
    expect(r.stdout).toContain('counts: all 8000 lines committed exactly once');
  });

  it('a job module asking for task managers with memory storage is refused naming the option', async () => {
    const r = await runCli(['run', path.join(FIXTURES, 'tm-counts-job.ts'), '--quiet']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('taskManagers: 2 task managers need checkpointStorage to be a directory');
  });
});
