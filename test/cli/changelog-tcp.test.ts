/**
 * The changelog backend's figures from a `weir taskmanager` process over TCP (loopback): the job
 * master shows each subtask's materialization age on its own clock, though the task manager
 * stamps materializations on another process's clock (another host's, with another origin). Read
 * from `GET /jobs/:id/changelog` and `/metrics` of the dashboard while the kill job runs: never
 * negative, never more than the job has run. Offsets between the clocks: figures.test.ts and
 * test/web/changelog-figures.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KILL_JOB } from './kill-harness.ts';
import { CLI_TEST_TIMEOUT_MS, startCli, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

const started: CliRun[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
});

function start(args: readonly string[], env: Readonly<Record<string, string>>): CliRun {
  const cli = startCli(args, { env });
  started.push(cli);
  return cli;
}

type Subtask = { subtask: number; materializations: number; 'materialization-age-ms': number | null };
type Answer = { vertices: Array<{ id: string; totals: Subtask; subtasks: Subtask[] }> };

/** The age gauge's samples of `/metrics`, seconds. */
function ageSamples(text: string): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('weir_changelog_materialization_age_seconds{'))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

describe('changelog figures of a task manager process over TCP', () => {
  it(
    'the materialization ages the job master shows are between 0 and the time the job has run, in REST and /metrics',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-changelog-tcp-'));
      const env = { KILL_RATE: '2000', KILL_RECORDS: '40000', KILL_INTERVAL_MS: '100', KILL_CHANGELOG_MS: '100', KILL_PAD_BYTES: '2000' };
      const startedMs = performance.now();
      const jm = start(['run', KILL_JOB, '--listen', '127.0.0.1:0', '--task-managers', '1', '--checkpoint-dir', root], env);
      const address = (await waitForMatch(jm, /job master listening at (\S+); join with/, 60_000, 'the listening line'))[1]!;
      start(['taskmanager', '--connect', address, '--slots', '4'], env);
      const m = await waitForMatch(jm, /^dashboard: (http:\/\/\S+)\/ \(job ([A-Za-z0-9._-]+);/m, 60_000, 'the dashboard line');
      const [base, jobId] = [m[1]!, m[2]!];
      const get = async (): Promise<Answer> => (await (await fetch(`${base}/jobs/${jobId}/changelog`)).json()) as Answer;
      // Every subtask of the keyed vertex materialized at least once.
      let answer = await get();
      await within(
        60_000,
        (async () => {
          while (!(answer.vertices.length > 0 && answer.vertices.every((v) => v.subtasks.every((s) => s.materializations >= 1)))) {
            await new Promise((r) => setTimeout(r, 100));
            answer = await get();
          }
        })(),
        () => `no materialization in every subtask; last answer ${JSON.stringify(answer)}\nstderr:\n${jm.output().stderr}`,
      );
      // A few answers while the job runs and materializes on.
      for (let i = 0; i < 5; i++) {
        const a = await get();
        const metrics = await (await fetch(`${base}/metrics`)).text();
        const ranMs = performance.now() - startedMs;
        const ages = a.vertices.flatMap((v) => [v.totals, ...v.subtasks].map((s) => s['materialization-age-ms']));
        expect(ages.length).toBeGreaterThan(1);
        for (const age of ages) {
          expect(age, JSON.stringify(a)).not.toBeNull();
          expect(age!).toBeGreaterThanOrEqual(0);
          expect(age!, JSON.stringify(a)).toBeLessThanOrEqual(ranMs);
        }
        const gauges = ageSamples(metrics);
        expect(gauges.length).toBeGreaterThan(0);
        for (const s of gauges) {
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s * 1000).toBeLessThanOrEqual(ranMs);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      jm.child.kill('SIGINT');
      await within(60_000, jm.done, () => jm.output().stderr);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
