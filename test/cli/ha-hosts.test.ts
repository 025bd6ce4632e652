/**
 * High availability across hosts: two `weir run --ha` job masters and a `weir taskmanager --ha`,
 * each in a network namespace of its own (test/support/netns.ts), the HA store (the local
 * PostgreSQL) reached through a proxy at the test network's gateway. The leader's host is cut off
 * (its link down): it cannot renew its lease, so it stops and exits saying why; the standby on the
 * other host takes over from the newest published checkpoint; the task manager, which hears nothing
 * from its job master any more (a cut closes no connection), gives it up after heartbeat.timeoutMs
 * and joins the new leader through the store. Output exact. Without root or ip netns this skips,
 * saying why; ha.test.ts runs the loopback cases.
 */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestNetwork, netnsProblem, type TestNetwork } from '../support/netns.ts';
import { TcpCutProxy } from '../support/tcp-cut-proxy.ts';
import { checkpointMoment, KILL_JOB } from './kill-harness.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { CLI_TEST_TIMEOUT_MS, startCli, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

const problem = netnsProblem();
if (problem !== null) console.warn(`ha-hosts: skipped: ${problem}`);
const PG_HOST = process.env.WEIR_PG_HOST ?? '127.0.0.1';
const PG_PORT = Number(process.env.WEIR_PG_PORT ?? 5432);

describe.skipIf(problem !== null)('HA job masters and a task manager on hosts of their own (network namespaces)', () => {
  let net: TestNetwork;
  let proxy: TcpCutProxy;
  const running: CliRun[] = [];
  const job = `ha-hosts-${process.pid}`;
  beforeAll(async () => {
    net = createTestNetwork(30 + (process.pid % 200), 3);
    proxy = await TcpCutProxy.start(PG_HOST, PG_PORT, net.gateway);
  });
  afterAll(async () => {
    for (const c of running) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await proxy?.close();
    net?.destroy();
    const c = new pg.Client({ host: PG_HOST, port: PG_PORT, user: 'root', database: 'test' });
    await c.connect();
    for (const table of ['weir_ha_leases', 'weir_ha_pointers', 'weir_ha_published'])
      await c.query(`DELETE FROM ${table} WHERE job = $1`, [job]).catch(() => {});
    await c.end();
  });

  it(
    "the leader's host cut off: it exits for want of a renewal, the standby on another host takes over, the task manager leaves the silent leader and joins the new one; exactly once",
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-hosts-'));
      const store = `postgres://root@${net.gateway}:${proxy.port}/test`;
      const env = { KILL_RATE: '2000', KILL_INTERVAL_MS: '100', KILL_HEARTBEAT_MS: '200' };
      const [hostA, hostB, hostTm] = net.hosts;
      const jobMaster = (host: typeof hostA) => {
        const cli = startCli(
          [
            'run',
            KILL_JOB,
            '--checkpoint-dir',
            root,
            '--ha',
            store,
            '--ha-job',
            job,
            '--ha-lease',
            '1500',
            '--quiet',
            '--listen',
            `${host!.address}:0`,
            '--insecure',
            '--task-managers',
            '1',
            '--registration-timeout',
            '60000',
          ],
          { env, netns: host!.ns },
        );
        running.push(cli);
        return cli;
      };
      const a = jobMaster(hostA);
      await waitForMatch(a, /leading job '\S+' as \S+ \(epoch 1, lease 1500 ms\)$/m, 60_000, 'the first leader');
      const tm = startCli(['taskmanager', '--ha', store, '--ha-job', job, '--slots', '2', '--insecure'], { env, netns: hostTm!.ns });
      running.push(tm);
      await waitForMatch(
        a,
        new RegExp(`task manager tm-1 .*${hostTm!.address.replaceAll('.', '\\.')}:.* joined with 2 slots`),
        60_000,
        'the task manager joining the first leader',
      );
      const b = jobMaster(hostB);
      await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
      const jobDir = path.join(root, (await waitForMatch(a, /control: \S+ \(job (\S+)\)/, 60_000, 'the control line'))[1]!);
      expect(await checkpointMoment(a, jobDir, 'after-complete', 3, 60_000)).toBe(true);
      net.cut(0);
      try {
        const deposed = await within(60_000, a.done, () => a.output().stderr);
        expect(deposed.code, deposed.stderr).toBe(1);
        expect(deposed.stderr).toMatch(/lost the leadership of job '?ha-hosts-\d+'? \(epoch 1\)/);
        await waitForMatch(b, /leading job '\S+' as \S+ \(epoch 2, lease 1500 ms\); taking over from checkpoint \d+/, 60_000, 'the takeover');
        await within(60_000, tm.waitForStderr('treating it as gone'), () => tm.output().stderr);
        await waitForMatch(b, /task manager tm-1 .* joined with 2 slots/, 60_000, 'the task manager joining the new leader');
      } finally {
        net.heal(0);
      }
      const r = await within(120_000, b.done, () => `${b.output().stderr}\n--- task manager:\n${tm.output().stderr}`);
      expect(r.code, r.stderr).toBe(0);
      expect(tm.output().stderr).toMatch(
        new RegExp(`no message from the job master at ${hostA!.address.replaceAll('.', '\\.')}:\\d+ for \\d+ ms \\(heartbeat\\.timeoutMs \\d+\\)`),
      );
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
