/**
 * `weir advise <job>` on a job running under `weir run`: the id is resolved through the job
 * registry and the advice comes from the job's control endpoint (`GET /advice`), the same answer
 * as the dashboard's `GET /jobs/:id/advice`; an id that is neither a directory nor a running job is
 * a usage error naming it.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIN_CHECKPOINTS } from '../../src/advisor/thresholds.ts';
import { until } from '../support/jobs.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, REGISTRY, runCli } from './run-cli.ts';
import { startJob, untilRunning, within } from './running-job.ts';

interface AdviceJson {
  readonly kind: string;
  readonly source: string;
  readonly measured?: number;
  readonly situation?: { readonly measured: number; readonly completed: number; readonly intervalMs: number | null };
}

describe('weir advise <job id>', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('advises a running job from its measured checkpoints, by id and by control address', async () => {
    // slow-job checkpoints every 100 ms
    const job = await startJob([path.join(FIXTURES, 'slow-job.ts'), '--quiet']);
    try {
      await untilRunning(job);
      let answer: AdviceJson | null = null;
      await until(
        `job ${job.jobId} to have ${MIN_CHECKPOINTS} checkpoints for advice`,
        async () => {
          const r = await runCli(['advise', job.jobId, '--json']);
          expect(r.code, r.stderr).toBe(0);
          answer = JSON.parse(r.stdout) as AdviceJson;
          if (answer.kind === 'too-few') expect(answer).toMatchObject({ needed: MIN_CHECKPOINTS, source: `job ${job.jobId}` });
          return answer.kind === 'advice';
        },
        60_000,
      );
      const advice = answer as unknown as AdviceJson;
      expect(advice.source).toBe(`job ${job.jobId}`);
      expect(advice.situation!.measured).toBeGreaterThanOrEqual(MIN_CHECKPOINTS);
      expect(advice.situation!.completed).toBeGreaterThanOrEqual(MIN_CHECKPOINTS);
      expect(advice.situation!.intervalMs).toBe(100);

      const text = await runCli(['advise', job.address]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^Checkpoints of job ${job.jobId}: \\d+ measured, \\d+ completed`));
      expect(text.stdout).toContain('interval 100 ms');
    } finally {
      await runCli(['cancel', job.jobId]);
      await within(30_000, job.cli.done, () => `weir run did not end after weir cancel; stderr:\n${job.cli.output().stderr}`);
    }
  });

  it('names an id that is neither a directory nor a running job', async () => {
    const r = await runCli(['advise', 'no-such-job-29']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("advise: 'no-such-job-29' is neither a directory");
    expect(r.stderr).toContain(`no running job 'no-such-job-29': it is not registered in ${REGISTRY}`);
  });
});
