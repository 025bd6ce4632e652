/**
 * The HA store's PostgreSQL restarted under a running leader, on a private server (the shared one
 * serves other tests): a restart shorter than the lease is ridden out (the leader reconnects and
 * renews in time, the job runs on under the same epoch); an outage longer than the lease deposes
 * the leader (it stops, exit 1, saying why) and the standby, which outlives the outage, takes over
 * once the server is back. The FileSink output is every line exactly once in both.
 */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PrivatePostgres, privatePostgresAvailable } from '../support/private-postgres.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { checkpointsIn, KILL_JOB, waitUntil } from './kill-harness.ts';
import { CLI_TEST_TIMEOUT_MS, startCli, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

let server: PrivatePostgres;
const started: CliRun[] = [];
beforeAll(async () => {
  server = await PrivatePostgres.start();
}, 120_000);
afterAll(async () => {
  await server?.remove();
});
afterEach(() => {
  for (const c of started.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
});

const RECORDS = 12_000;

function jobMaster(root: string, leaseMs: number): CliRun {
  const cli = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', server.url, '--ha-job', 'restart', '--ha-lease', String(leaseMs), '--quiet'], {
    env: { KILL_RECORDS: String(RECORDS), KILL_RATE: '600', KILL_INTERVAL_MS: '100' },
  });
  started.push(cli);
  return cli;
}

/** Waits until the leader completed a checkpoint (its job directory from its control line). */
async function afterACheckpoint(cli: CliRun, root: string): Promise<void> {
  const m = await waitForMatch(cli, /control: \S+ \(job (\S+)\)/, 60_000, 'the control line');
  expect(await waitUntil(cli, 'a checkpoint', () => checkpointsIn(path.join(root, m[1]!)).completed.length > 0, 60_000)).toBe(true);
}

describe.skipIf(!privatePostgresAvailable)('the HA store restarted under a running leader (a private PostgreSQL)', () => {
  it(
    'a restart within the lease: the leader reconnects, renews in time and runs on under the same epoch; output exact',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-restart-'));
      const a = jobMaster(root, 20_000);
      await waitForMatch(a, /leading job 'restart' as \S+ \(epoch (\d+), lease 20000 ms\)$/m, 60_000, 'the leader');
      await afterACheckpoint(a, root);
      await server.stop();
      await server.startAgain();
      const r = await within(120_000, a.done, () => a.output().stderr);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain('lost the leadership');
      expect(r.stderr.match(/leading job/g)).toHaveLength(1);
      expect(checkKillOutput(outputDirOf(root), RECORDS, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'an outage longer than the lease: the leader steps down (exit 1, saying why), the standby outlives it and takes over once the server is back; output exact',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-restart-'));
      // A new run of the job's name (the first test ended it).
      const a = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', server.url, '--ha-job', 'restart-2', '--ha-lease', '1500', '--quiet'], {
        env: { KILL_RECORDS: String(RECORDS), KILL_RATE: '600', KILL_INTERVAL_MS: '100' },
      });
      started.push(a);
      await waitForMatch(a, /leading job 'restart-2' as \S+ \(epoch 1, lease 1500 ms\)$/m, 60_000, 'the leader');
      const b = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', server.url, '--ha-job', 'restart-2', '--ha-lease', '1500', '--quiet'], {
        env: { KILL_RECORDS: String(RECORDS), KILL_RATE: '600', KILL_INTERVAL_MS: '100' },
      });
      started.push(b);
      await waitForMatch(b, /standby: job 'restart-2' is led by \S+ \(epoch 1\)/, 60_000, 'the standby');
      await afterACheckpoint(a, root);
      await server.stop();
      const ra = await within(60_000, a.done, () => a.output().stderr);
      expect(ra.code).toBe(1);
      expect(ra.stderr).toContain('lost the leadership of job restart-2 (epoch 1)');
      await server.startAgain();
      await waitForMatch(b, /leading job 'restart-2' as \S+ \(epoch 2, lease 1500 ms\); taking over from checkpoint \d+/, 60_000, 'the takeover');
      expect(b.output().stderr).toContain('standby: the HA store');
      const rb = await within(120_000, b.done, () => b.output().stderr);
      expect(rb.code, rb.stderr).toBe(0);
      expect(checkKillOutput(outputDirOf(root), RECORDS, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
