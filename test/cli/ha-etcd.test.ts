/**
 * `weir run --ha etcd://...` with real processes and an etcd of the test's own: two job masters of
 * the kill job (FileSink, exactly once) and a task manager process that joins through the store;
 * the leader is SIGKILLed while a checkpoint is written; the standby takes over from the newest
 * published checkpoint under a higher epoch (etcd's revision), the task manager follows it, and
 * the output is every line exactly once. Skips, saying why, without the etcd binary.
 */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdHaStore } from '../../src/cluster/ha/etcd-ha-store.ts';
import { PrivateServer, serverProblem } from '../support/servers.ts';
import { checkpointMoment, KILL_JOB } from './kill-harness.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { CLI_TEST_TIMEOUT_MS, startCli, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

const problem = serverProblem('etcd', 'etcd-server');
if (problem !== null) console.warn(`ha-etcd: skipped: ${problem}`);

describe.skipIf(problem !== null)('weir run --ha (etcd)', () => {
  let etcd: PrivateServer;
  let url: string;
  const started: CliRun[] = [];
  beforeAll(async () => {
    etcd = await PrivateServer.etcd();
    url = `etcd://127.0.0.1:${etcd.port}`;
  });
  afterAll(async () => {
    for (const c of started) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await etcd?.kill();
  });

  it(
    'the leader SIGKILLed while a checkpoint is written: the standby takes over with a higher epoch, the task manager follows; exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-etcd-'));
      const job = `ha-etcd-${process.pid}`;
      const env = { KILL_RATE: '3000', KILL_INTERVAL_MS: '100' };
      const jobMaster = () => {
        const cli = startCli(
          [
            'run',
            KILL_JOB,
            '--checkpoint-dir',
            root,
            '--ha',
            url,
            '--ha-job',
            job,
            '--ha-lease',
            '1500',
            '--quiet',
            '--listen',
            '127.0.0.1:0',
            '--task-managers',
            '1',
            '--registration-timeout',
            '60000',
          ],
          { env },
        );
        started.push(cli);
        return cli;
      };
      const a = jobMaster();
      const first = Number((await waitForMatch(a, /leading job '\S+' as \S+ \(epoch (\d+), lease 1500 ms\)$/m, 60_000, 'the first leader'))[1]);
      const tm = startCli(['taskmanager', '--ha', url, '--ha-job', job, '--slots', '2'], { env });
      started.push(tm);
      await waitForMatch(a, /task manager tm-1 .* joined with 2 slots/, 60_000, 'the task manager joining the first leader');
      const b = jobMaster();
      await waitForMatch(b, new RegExp(`standby: job '${job}' is led by \\S+ \\(epoch ${first}\\) in etcd://127\\.0\\.0\\.1:\\d+`), 60_000, 'the standby');
      const jobDir = path.join(root, (await waitForMatch(a, /control: \S+ \(job (\S+)\)/, 60_000, 'the control line'))[1]!);
      expect(await checkpointMoment(a, jobDir, 'during', 3)).toBe(true);
      a.child.kill('SIGKILL');
      const takeover = await waitForMatch(
        b,
        /leading job '\S+' as \S+ \(epoch (\d+), lease 1500 ms\); taking over from checkpoint \d+/,
        60_000,
        'the takeover',
      );
      expect(Number(takeover[1])).toBeGreaterThan(first);
      await waitForMatch(b, /task manager tm-1 .* joined with 2 slots/, 60_000, 'the task manager joining the new leader');
      const r = await within(120_000, b.done, () => `${b.output().stderr}\n--- task manager:\n${tm.output().stderr}`);
      expect(r.code, r.stderr).toBe(0);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
      // The job ended: its pointer, list and submission went, and the lease is marked ended.
      const store = await EtcdHaStore.open(url);
      try {
        expect(await store.latest(job)).toBeNull();
        expect(await store.submission(job)).toBeNull();
        expect((await store.leader(job))?.holder).toBe('');
      } finally {
        await store.close();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
