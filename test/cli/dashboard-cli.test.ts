import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startJob, waitForMatch, within } from './running-job.ts';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

describe('weir run serves the dashboard and REST API', () => {
  it('prints the dashboard address next to the control line; the REST API answers there', async () => {
    const job = await startJob([path.join(FIXTURES, 'slow-job.ts'), '--quiet']);
    try {
      const m = await waitForMatch(job.cli, /^dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ \(job ([A-Za-z0-9._-]+);/m, 30_000, "the 'dashboard:' line");
      expect(m[2]).toBe(job.jobId);
      const stderr = job.cli.output().stderr;
      expect(stderr.indexOf('dashboard: ')).toBeGreaterThan(stderr.indexOf('control: '));
      const jobs = (await (await fetch(`${m[1]}/jobs`)).json()) as { jobs: Array<{ id: string }> };
      expect(jobs.jobs.map((j) => j.id)).toEqual([job.jobId]);
      const metrics = await (await fetch(`${m[1]}/metrics`)).text();
      expect(metrics).toContain('weir_records_in_total');
    } finally {
      job.cli.child.kill('SIGINT');
      await within(30_000, job.cli.done, () => `weir run did not end after SIGINT; stderr:\n${job.cli.output().stderr}`);
    }
  });
});
