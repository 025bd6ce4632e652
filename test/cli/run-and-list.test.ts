import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, lines, runCli, startCli } from './run-cli.ts';

interface Listed {
  jobId: string;
  checkpointId: number;
  kind: string;
  status: string;
  time: string | null;
  type: string | null;
  persistedBytes: number | null;
  sizeBytes: number;
  location: string;
}

describe('weir run and weir checkpoints', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weir-cli-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a job module to exit 0, retains its checkpoint, lists it and restores from it', async () => {
    const run = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--checkpoint-dir', dir, '--parallelism', '3']);
    expect(run.code, run.stderr).toBe(0);
    const last = lines(run.stderr).at(-1)!;
    expect(last).toMatch(/^FINISHED \| job tiny-[0-9a-f]{6} in /);

    const listed = await runCli(['checkpoints', dir, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout) as Listed[];
    expect(entries).toHaveLength(1);
    const [chk] = entries;
    expect(chk!.jobId).toMatch(/^tiny-/);
    expect(chk!.status).toBe('complete');
    expect(chk!.kind).toBe('checkpoint');
    expect(chk!.checkpointId).toBeGreaterThanOrEqual(1);
    expect(chk!.sizeBytes).toBeGreaterThan(0);
    expect(new Date(chk!.time!).toISOString()).toBe(chk!.time);
    expect(last).toContain(chk!.location);

    const table = await runCli(['checkpoints', dir]);
    expect(table.code).toBe(0);
    const rows = lines(table.stdout);
    expect(rows[0]).toMatch(/^JOB\s+CHECKPOINT\s+TIME\s+SIZE\s+KIND\s+TYPE\s+PERSISTED\s+STATE\s+IN-FLIGHT\s+HANDLES\s+STATUS$/);
    expect(rows[1]).toContain(chk!.jobId);
    expect(rows[1]).toMatch(/checkpoint\s+aligned\s+\d+(\.\d)? (B|KiB)\s+\d+(\.\d)? (B|KiB)\s+0 B\s+(key-groups|-)\s+complete$/);
    expect(chk!.type).toBe('aligned');
    expect(chk!.persistedBytes).toBeGreaterThan(0);

    const resumed = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--checkpoint-dir', dir, '--from', chk!.location, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`restored from checkpoint ${chk!.checkpointId}`);
  });

  it('exits 1 with one weir: line when the job fails', async () => {
    const r = await runCli(['run', path.join(FIXTURES, 'failing-job.ts'), '--quiet']);
    expect(r.code, r.stderr).toBe(1);
    const err = lines(r.stderr);
    expect(err.at(-2)).toMatch(/^FAILED \| job failing-/);
    expect(err.at(-1)).toMatch(/^weir: .*boom at record 100/);
  });

  it('cancels on SIGINT and exits 130, keeping the checkpoints', async () => {
    const cli = startCli(['run', path.join(FIXTURES, 'slow-job.ts'), '--checkpoint-dir', dir]);
    let r: Awaited<typeof cli.done>;
    try {
      await cli.waitForStderr('| checkpoint ');
      cli.child.kill('SIGINT');
      r = await cli.done;
    } finally {
      cli.child.kill('SIGKILL');
    }
    expect(r.code, r.stderr).toBe(130);
    expect(lines(r.stderr).at(-1)).toMatch(/^CANCELED \| job slow-/);
    const listed = JSON.parse((await runCli(['checkpoints', dir, '--json'])).stdout) as Listed[];
    expect(listed.some((l) => l.jobId.startsWith('slow-') && l.status === 'complete')).toBe(true);
  });
});
