/**
 * The Nexmark q5 job module under `weir run`: it runs to the end with checkpoints over a small
 * NEXMARK_EVENTS, keeps its figures in the retained job directory, and `weir advise` reads every
 * checkpoint of the run from there; a bad NEXMARK_EVENTS stops the run naming the variable.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIGURES_FILE } from '../../src/advisor/figures-file.ts';
import { CLI_TEST_TIMEOUT_MS, REPO, runCli } from './run-cli.ts';

const JOB = path.join(REPO, 'examples/nexmark/q5-job.ts');

describe('examples/nexmark/q5-job.ts under weir run', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weir-nexmark-job-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs q5 with checkpoints and weir advise reads the run from its job directory', async () => {
    const run = await runCli(['run', JOB, '--checkpoint-dir', dir, '--checkpoint-interval', '100', '--quiet'], { env: { NEXMARK_EVENTS: '30000' } });
    expect(run.code, run.stderr).toBe(0);
    const [jobId] = (await readdir(dir)).filter((n) => n.startsWith('nexmark-q5-'));
    expect(jobId).toBeDefined();
    const jobDir = path.join(dir, jobId!);
    const file = JSON.parse(await readFile(path.join(jobDir, FIGURES_FILE), 'utf8')) as {
      checkpointing: { intervalMs: number };
      backpressureRatio: number | null;
      checkpoints: Array<{ status: string; syncMs: number | null }>;
    };
    expect(file.checkpointing.intervalMs).toBe(100);
    // the last attempt's backpressure, measured in this run (the busiest subtask's share of its running time)
    expect(file.backpressureRatio).toBeGreaterThanOrEqual(0);
    expect(file.backpressureRatio).toBeLessThanOrEqual(1);
    expect(file.checkpoints.length).toBeGreaterThanOrEqual(1);
    expect(file.checkpoints.every((c) => c.status !== 'completed' || c.syncMs !== null)).toBe(true);
    const advice = await runCli(['advise', jobDir, '--json']);
    expect(advice.code, advice.stderr).toBe(0);
    const a = JSON.parse(advice.stdout) as { kind: string; measured?: number; situation?: { measured: number } };
    expect(a.measured ?? a.situation?.measured).toBe(file.checkpoints.length);
  });

  it('names NEXMARK_EVENTS when it is not a count', async () => {
    const bad = await runCli(['run', JOB, '--quiet'], { env: { NEXMARK_EVENTS: 'many' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("NEXMARK_EVENTS must be a positive integer or Infinity, got 'many'");
  });
});
