import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../../src/index.ts';
import { expectedLines, KEYS, RECORDS } from './fixtures/counts-job.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, lines, runCli } from './run-cli.ts';
import { startJob, waitForMatch, within } from './running-job.ts';

interface InspectJson {
  kind: string;
  formatVersion: number;
  checkpointId: number;
  jobId: string;
  createdAt: string;
  operators: Array<{
    uid: string;
    parallelism: number;
    maxParallelism: number;
    states: Array<{ name: string; scope: string; kind: string | null; keys?: number; entries?: number; bytes: number }>;
  }>;
}

const COUNTS = path.join(FIXTURES, 'counts-job.ts');

describe('weir savepoint, stop --savepoint and resume from it', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weir-cli-savepoint-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes a savepoint, inspects it, stops with one, and resumes at parallelism 3 with exactly-once output', async () => {
    const chk = path.join(dir, 'chk');
    // Held at 1,000 records a source subtask: the job is still running when the stop arrives.
    const job = await startJob([COUNTS, '--checkpoint-dir', chk], { env: { COUNTS_HOLD: '1000' } });
    let stopSavepoint: string;
    try {
      await waitForMatch(job.cli, /\| checkpoint \d+:/, 30_000, 'a completed checkpoint');

      // Default --dir: ./savepoints of the caller's working directory, sent as an absolute path.
      const taken = await runCli(['savepoint', job.jobId], { cwd: dir });
      expect(taken.code, taken.stderr).toBe(0);
      const savepoint = lines(taken.stdout).at(-1)!;
      expect(path.dirname(savepoint)).toBe(path.join(dir, 'savepoints'));
      expect(path.basename(savepoint)).toMatch(/^savepoint-\d+-[0-9a-f]+$/);
      expect(existsSync(path.join(savepoint, '_metadata'))).toBe(true);

      const stopped = await runCli(['stop', job.jobId, '--savepoint', '--dir', path.join(dir, 'stop')]);
      expect(stopped.code, stopped.stderr).toBe(0);
      stopSavepoint = lines(stopped.stdout).at(-1)!;
      expect(path.dirname(stopSavepoint)).toBe(path.join(dir, 'stop'));

      const run = await within(30_000, job.cli.done, () => `weir run did not end after the stop; stderr:\n${job.cli.output().stderr}`);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/^FINISHED \| job counts-/m);
      expect(run.stderr).toContain(`stopped with savepoint ${stopSavepoint}`);
      expect(run.stdout).toMatch(/^counts: stopped, \d+ of 8000 lines committed$/m);
      // Stop-with-savepoint committed the sinks: what is committed is a whole prefix, never more than once.
      const committed = readCommittedLines(path.join(chk, 'counts-output'));
      expect(committed.length).toBeGreaterThan(0);
      expect(committed.length).toBeLessThan(RECORDS);
      expect(new Set(committed).size).toBe(committed.length);
    } finally {
      job.cli.child.kill('SIGKILL');
    }

    const inspected = await runCli(['savepoint', 'inspect', stopSavepoint, '--json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    const report = JSON.parse(inspected.stdout) as InspectJson;
    expect(report.kind).toBe('savepoint');
    expect(report.formatVersion).toBe(1);
    expect(report.jobId).toBe(job.jobId);
    expect(new Date(report.createdAt).toISOString()).toBe(report.createdAt);
    const count = report.operators.find((o) => o.uid === 'count')!;
    expect(count).toMatchObject({ parallelism: 2, maxParallelism: 128 });
    expect(count.states).toEqual([{ name: 'count', scope: 'keyed', kind: 'value', keys: KEYS, bytes: expect.any(Number) }]);
    expect(count.states[0]!.bytes).toBeGreaterThan(0);
    const source = report.operators.find((o) => o.uid === 'keys')!;
    expect(source.states.every((s) => s.scope === 'operator' && (s.kind === 'split' || s.kind === 'union'))).toBe(true);

    const table = await runCli(['savepoint', 'inspect', stopSavepoint]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^ {2}format version {2}1$/m);
    expect(table.stdout).toMatch(/^count\s+keyed-process\s+2\s+128\s+count\s+keyed value\s+20 keys\s+\d+ B$/m);

    const resumed = await runCli(['run', COUNTS, '--checkpoint-dir', chk, '--from', stopSavepoint, '--parallelism', '3', '--quiet'], {
      env: { COUNTS_RATE: '20000' },
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/restored from checkpoint \d+/);
    expect(resumed.stdout).toContain('counts: all 8000 lines committed exactly once');
    // The committed output of both runs together: every line exactly once.
    expect(readCommittedLines(path.join(chk, 'counts-output')).sort()).toEqual(expectedLines());
  });
});
