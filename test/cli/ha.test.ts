/**
 * Job master high availability with real processes and the local PostgreSQL as the HA store: two
 * `weir run --ha` of the kill job (FileSink, exactly once), one leads and one waits; the leader is
 * SIGKILLed while a checkpoint is written, or paused (SIGSTOP) past its lease and resumed while
 * the new leader runs. The standby takes over from the newest published checkpoint, the stale
 * leader ends without committing, and the output is every line exactly once. The HA rows of the
 * job go when it ends.
 */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkpointMoment, KILL_JOB } from './kill-harness.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, runCli, startCli, type CliRun } from './run-cli.ts';
import { checkpointsIn, waitUntil } from './kill-harness.ts';
import { freshSchema } from '../connectors/postgres/pg-support.ts';
import { TcpCutProxy } from '../support/tcp-cut-proxy.ts';
import { waitForMatch, within } from './running-job.ts';

const HA = `postgres://root@${process.env.WEIR_PG_HOST ?? '127.0.0.1'}:${process.env.WEIR_PG_PORT ?? 5432}/test`;
const started: CliRun[] = [];
const jobs: string[] = [];
afterEach(() => {
  for (const c of started.splice(0)) {
    if (c.child.exitCode === null && c.child.signalCode === null) {
      c.child.kill('SIGCONT');
      c.child.kill('SIGKILL');
    }
  }
});
afterAll(async () => {
  const c = new pg.Client({ connectionString: HA });
  await c.connect();
  for (const j of jobs) {
    await c.query('DELETE FROM weir_ha_leases WHERE job = $1', [j]).catch(() => {});
    await c.query('DELETE FROM weir_ha_pointers WHERE job = $1', [j]).catch(() => {});
    await c.query('DELETE FROM weir_ha_published WHERE job = $1', [j]).catch(() => {});
    await c.query('DELETE FROM weir_ha_submissions WHERE job = $1', [j]).catch(() => {});
    await c.query('DELETE FROM weir_ha_standbys WHERE job = $1', [j]).catch(() => {});
  }
  await c.end();
});

function jobMaster(root: string, job: string, env: Readonly<Record<string, string>>, extra: readonly string[] = []): CliRun {
  const cli = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', HA, '--ha-job', job, '--ha-lease', '1500', '--quiet', ...extra], { env });
  started.push(cli);
  return cli;
}

async function rows(job: string): Promise<{ lease: { holder: string } | null; pointer: unknown }> {
  const c = new pg.Client({ connectionString: HA });
  await c.connect();
  try {
    const lease = await c.query('SELECT holder FROM weir_ha_leases WHERE job = $1', [job]);
    const pointer = await c.query('SELECT checkpoint_id FROM weir_ha_pointers WHERE job = $1', [job]);
    return { lease: lease.rows[0] ?? null, pointer: pointer.rows[0] ?? null };
  } finally {
    await c.end();
  }
}

/** The leader's job directory, from the control line it prints. */
async function jobDirOf(cli: CliRun, root: string): Promise<string> {
  const m = await waitForMatch(cli, /control: \S+ \(job (\S+)\)/, 60_000, 'the control line');
  return path.join(root, m[1]!);
}

describe('weir run --ha (PostgreSQL)', () => {
  it('an HA store that cannot be reached is one error naming its URL, without the password, before anything starts', async () => {
    const r = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--ha', 'postgres://root:sekret-pw@127.0.0.1:1/test']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot reach the HA store postgres://root:***@127.0.0.1:1/test');
    expect(r.stderr).not.toContain('sekret-pw');
    expect(r.stderr).not.toContain('control:');
  });

  it(
    "a job module's highAvailability option runs as --ha: one leads, the other waits and exits when the job ended; output exact",
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-option-${process.pid}`;
      jobs.push(job);
      // About 10 s of input: the standby must start (a few seconds on a loaded machine) while the leader runs.
      const env = { KILL_RECORDS: '3000', KILL_RATE: '300', KILL_INTERVAL_MS: '100', KILL_HA_URL: HA, KILL_HA_JOB: job, KILL_HA_LEASE_MS: '1200' };
      const run = (): CliRun => {
        const cli = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--quiet'], { env });
        started.push(cli);
        return cli;
      };
      const a = run();
      await waitForMatch(a, new RegExp(`leading job '${job}' as \\S+ \\(epoch \\d+, lease 1200 ms\\)$`, 'm'), 60_000, 'the leader');
      const b = run();
      await waitForMatch(b, new RegExp(`standby: job '${job}' is led by`), 60_000, 'the standby');
      const ra = await within(60_000, a.done, () => a.output().stderr);
      expect(ra.code, ra.stderr).toBe(0);
      const rb = await within(60_000, b.done, () => b.output().stderr);
      expect(rb.code, rb.stderr).toBe(0);
      expect(rb.stderr).toContain(`job '${job}' has ended (its last leader finished it); nothing to run`);
      expect(checkKillOutput(outputDirOf(root), 3000, KEYS).problems).toEqual([]);
      expect(await rows(job)).toEqual({ lease: { holder: '' }, pointer: null });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    '--ha and its companions win over the option; an unreachable store from the option is named without its password',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-override-${process.pid}`;
      jobs.push(job);
      const unreachable = 'postgres://root:sekret-pw@127.0.0.1:1/test';
      const env = { KILL_RECORDS: '300', KILL_RATE: '3000', KILL_HA_URL: unreachable, KILL_HA_JOB: 'not-this-name', KILL_HA_LEASE_MS: '5000' };
      const flagged = await runCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', HA, '--ha-job', job, '--ha-lease', '1300', '--quiet'], { env });
      expect(flagged.code, flagged.stderr).toBe(0);
      expect(flagged.stderr).toMatch(new RegExp(`leading job '${job}' as \\S+ \\(epoch \\d+, lease 1300 ms\\)`));
      expect(flagged.stderr).not.toContain('sekret-pw');
      const fromOption = await runCli(['run', KILL_JOB, '--checkpoint-dir', root, '--quiet'], { env });
      expect(fromOption.code).toBe(1);
      expect(fromOption.stderr).toContain('cannot reach the HA store postgres://root:***@127.0.0.1:1/test');
      expect(fromOption.stderr).not.toContain('sekret-pw');
      const stray = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--ha-job', job]);
      expect(stray.code).toBe(2);
      expect(stray.stderr).toContain("--ha-job applies with high availability: give --ha <url> (or the job's highAvailability option)");
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a standby is listed by weir list and answers /ha and /readyz (503) with the leader and its epoch; once it took over it is ready',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-list-${process.pid}`;
      jobs.push(job);
      // 50 s of input: the new leader must still run when it is listed (the test ends it).
      const env = { KILL_RATE: '400', KILL_INTERVAL_MS: '100' };
      const web = ['--web-host', '127.0.0.1'];
      const a = jobMaster(root, job, env, web);
      const led = await waitForMatch(a, /leading job '\S+' as (\S+) \(epoch (\d+), lease 1500 ms\)$/m, 60_000, 'the first leader');
      const [, holderA, epochA] = led;
      const dashboardA = (await waitForMatch(a, /dashboard: (http:\/\/127\.0\.0\.1:\d+)\//, 60_000, "the leader's dashboard"))[1]!;
      const b = jobMaster(root, job, env, web);
      await waitForMatch(b, /standby: job '\S+' is led by \S+ \(epoch \d+\)/, 60_000, 'the standby');
      const listed = await runCli(['list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const entries = (JSON.parse(listed.stdout) as Array<{ state: string; address: string; pid: number; ha?: Record<string, unknown> }>).filter(
        (e) => e.ha?.job === job,
      );
      const store = HA; // no password to mask
      const standby = entries.find((e) => e.pid === b.child.pid)!;
      expect(standby).toMatchObject({ state: 'STANDBY', ha: { role: 'standby', job, leader: holderA, epoch: Number(epochA), store } });
      expect(entries.find((e) => e.pid === a.child.pid)).toMatchObject({ state: 'RUNNING', ha: { role: 'leader', job, epoch: Number(epochA), store } });
      const table = await runCli(['list']);
      expect(table.stdout).toContain(`STANDBY`);
      expect(table.stdout).toContain(`standby of '${job}', led by ${holderA} (epoch ${epochA})`);
      const ha = await fetch(`${standby.address}/ha`);
      expect(await ha.json()).toEqual({ role: 'standby', job, leader: holderA, 'leader-epoch': Number(epochA), store });
      expect((await fetch(`${standby.address}/readyz`)).status).toBe(503);
      expect((await fetch(`${standby.address}/healthz`)).status).toBe(200);
      expect((await fetch(`${dashboardA}/readyz`)).status).toBe(200);
      // The leader's /ha (which the dashboard shows) lists the standby the store knows, with its web address.
      expect(
        await waitUntil(a, "the standby in the leader's /ha", async () => {
          const body = (await (await fetch(`${dashboardA}/ha`)).json()) as { standbys: Array<{ address: string | null }> };
          return body.standbys.some((w) => w.address === standby.address);
        }),
      ).toBe(true);
      const leaderHa = (await (await fetch(`${dashboardA}/ha`)).json()) as {
        role: string;
        standbys: Array<{ holder: string; address: string; 'seen-ms-ago': number }>;
      };
      expect(leaderHa.role).toBe('leader');
      expect(leaderHa.standbys).toHaveLength(1);
      expect(leaderHa.standbys[0]!.holder).toMatch(new RegExp(`:${b.child.pid}:`));
      expect(leaderHa.standbys[0]!['seen-ms-ago']).toBeGreaterThanOrEqual(0);
      a.child.kill('SIGKILL');
      await a.done;
      await waitForMatch(b, /leading job '\S+' as \S+ \(epoch \d+, lease 1500 ms\); taking over/, 60_000, 'the takeover');
      expect(await waitUntil(b, 'the new leader ready', async () => (await fetch(`${standby.address}/readyz`)).status === 200, 60_000)).toBe(true);
      expect(await (await fetch(`${standby.address}/ha`)).json()).toMatchObject({ role: 'leader', job, standbys: [] });
      const after = JSON.parse((await runCli(['list', '--json'])).stdout) as Array<{ pid: number; state: string; ha?: { role: string } }>;
      expect(after.filter((e) => e.pid === b.child.pid).map((e) => [e.state, e.ha?.role])).toEqual([['RUNNING', 'leader']]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'the leader is SIGKILLed while a checkpoint is written: the standby takes over from the newest published checkpoint, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-kill-${process.pid}`;
      jobs.push(job);
      const env = { KILL_RATE: '3000', KILL_INTERVAL_MS: '100' };
      const a = jobMaster(root, job, env);
      await waitForMatch(a, /leading job '\S+' as \S+ \(epoch (\d+), lease 1500 ms\)$/m, 60_000, 'the first leader');
      const b = jobMaster(root, job, env);
      await waitForMatch(b, /standby: job '\S+' is led by \S+ \(epoch \d+\)/, 60_000, 'the standby');
      const jobDir = await jobDirOf(a, root);
      expect(await checkpointMoment(a, jobDir, 'during', 4)).toBe(true);
      a.child.kill('SIGKILL');
      await a.done;
      const took = await waitForMatch(
        b,
        /leading job '\S+' as \S+ \(epoch (\d+), lease 1500 ms\); taking over from checkpoint (\d+) at (\S+)/,
        60_000,
        'the takeover',
      );
      expect(took[3]!.startsWith(jobDir)).toBe(true);
      const r = await within(120_000, b.done, () => b.output().stderr);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`running attempt 0, restored from checkpoint ${took[2]}`);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
      expect(await rows(job)).toEqual({ lease: { holder: '' }, pointer: null });
      // The job ended: a job master started again (a cluster manager restarting it) runs nothing.
      const again = jobMaster(root, job, env);
      const ended = await within(60_000, again.done, () => again.output().stderr);
      expect(ended.code).toBe(0);
      expect(ended.stderr).toContain(`job '${job}' has ended (its last leader finished it); nothing to run (--ha-new-run runs it again from the start)`);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a job master that built another job graph neither stands by nor takes over: one error naming both modules and the difference; the leader runs on, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-other-${process.pid}`;
      jobs.push(job);
      const env = { KILL_RATE: '3000', KILL_INTERVAL_MS: '100' };
      const a = jobMaster(root, job, env);
      await waitForMatch(a, /leading job '\S+' as \S+ \(epoch 1, lease 1500 ms\)$/m, 60_000, 'the leader');
      const c = new pg.Client({ connectionString: HA });
      await c.connect();
      const recorded = await c.query('SELECT epoch, graph, module_hash FROM weir_ha_submissions WHERE job = $1', [job]).finally(() => c.end());
      expect(recorded.rows[0]?.epoch).toBe('1');
      expect(recorded.rows[0]?.module_hash).toMatch(/^[0-9a-f]{64}$/);
      const other = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--checkpoint-dir', root, '--ha', HA, '--ha-job', job, '--ha-lease', '1500']);
      expect(other.code, other.stderr).toBe(1);
      expect(other.stderr).toMatch(
        new RegExp(
          `job '${job}' in the HA store \\S+ runs another job graph than this process built \\(recorded by epoch 1, module [0-9a-f]{12}; this process: module [0-9a-f]{12}\\): uid '\\S+' \\(vertex 0, '\\S+'\\) is missing; .*; a standby must run the same job`,
        ),
      );
      expect(other.stderr).not.toContain('standby:');
      const r = await within(120_000, a.done, () => a.output().stderr);
      expect(r.code, r.stderr).toBe(0);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
      expect((await rows(job)).pointer).toBeNull();
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a task manager process that joins through the HA store follows the job from the killed leader to the new one, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-tcp-${process.pid}`;
      jobs.push(job);
      const env = { KILL_RATE: '3000', KILL_INTERVAL_MS: '100' };
      const listen = ['--listen', '127.0.0.1:0', '--task-managers', '1', '--registration-timeout', '60000'];
      const a = jobMaster(root, job, env, listen);
      await waitForMatch(a, /leading job '\S+' as \S+ \(epoch \d+, lease 1500 ms\)$/m, 60_000, 'the first leader');
      const tm = startCli(['taskmanager', '--ha', HA, '--ha-job', job, '--slots', '2'], { env });
      started.push(tm);
      await waitForMatch(a, /task manager tm-1 .* joined with 2 slots/, 60_000, 'the task manager joining the first leader');
      const b = jobMaster(root, job, env, listen);
      await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
      const jobDir = await jobDirOf(a, root);
      expect(await checkpointMoment(a, jobDir, 'during', 3)).toBe(true);
      a.child.kill('SIGKILL');
      await waitForMatch(b, /leading job '\S+' as \S+ \(epoch \d+, lease 1500 ms\); taking over from checkpoint \d+/, 60_000, 'the takeover');
      await waitForMatch(b, /task manager tm-1 .* joined with 2 slots/, 60_000, 'the task manager joining the new leader');
      const r = await within(120_000, b.done, () => `${b.output().stderr}\n--- task manager:\n${tm.output().stderr}`);
      expect(r.code, r.stderr).toBe(0);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'SIGTERM to the leader (a cluster manager stopping its pod) steps it down: a standby takes over at once, the job is not ended, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-term-${process.pid}`;
      jobs.push(job);
      const env = { KILL_RATE: '2000', KILL_INTERVAL_MS: '100' };
      // A long lease: a takeover this quick comes from the lease given up, not run out.
      const start = () => {
        const cli = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', HA, '--ha-job', job, '--ha-lease', '30000', '--quiet'], { env });
        started.push(cli);
        return cli;
      };
      const a = start();
      await waitForMatch(a, /leading job '\S+' as \S+ \(epoch 1, lease 30000 ms\)$/m, 60_000, 'the first leader');
      const jobDir = await jobDirOf(a, root);
      const b = start();
      await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
      expect(await checkpointMoment(a, jobDir, 'after-complete', 3)).toBe(true);
      a.child.kill('SIGTERM');
      const stepped = await within(30_000, a.done, () => a.output().stderr);
      expect(stepped.code).toBe(143);
      expect(stepped.stderr).toContain('SIGTERM: stepping down: the job goes on under a standby');
      await waitForMatch(b, /leading job '\S+' as \S+ \(epoch 2, lease 30000 ms\); taking over from checkpoint \d+/, 20_000, 'the takeover');
      const r = await within(120_000, b.done, () => b.output().stderr);
      expect(r.code, r.stderr).toBe(0);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a leader paused (SIGSTOP) past its lease is replaced; resumed while the new leader runs, it commits nothing and ends saying why',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-stop-${process.pid}`;
      jobs.push(job);
      const env = { KILL_RATE: '2000', KILL_INTERVAL_MS: '100' };
      const a = jobMaster(root, job, env);
      await waitForMatch(a, /leading job '\S+' as (\S+) \(epoch 1, lease 1500 ms\)$/m, 60_000, 'the first leader');
      const jobDir = await jobDirOf(a, root);
      const b = jobMaster(root, job, env);
      await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
      expect(await checkpointMoment(a, jobDir, 'after-complete', 3)).toBe(true);
      a.child.kill('SIGSTOP');
      await waitForMatch(b, /leading job '\S+' as \S+ \(epoch 2, lease 1500 ms\); taking over from checkpoint \d+/, 60_000, 'the takeover');
      await waitForMatch(b, /running attempt 0, restored from checkpoint \d+/, 60_000, 'the new leader running');
      a.child.kill('SIGCONT');
      const stale = await within(60_000, a.done, () => a.output().stderr);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(/lost the leadership of job '?ha-stop-\d+'? \(epoch 1\)/);
      const r = await within(120_000, b.done, () => b.output().stderr);
      expect(r.code, r.stderr).toBe(0);
      expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'PostgresSink: a leader killed between a durable _metadata and its pointer (its transactions PREPAREd, not committed) is replaced; every row exactly once, no prepared transaction left',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-pg-${process.pid}`;
      jobs.push(job);
      const { schema, admin, drop } = await freshSchema('k text NOT NULL, n integer NOT NULL');
      await admin.query(`ALTER TABLE ${schema}.t RENAME TO out`);
      const env = {
        HA_SCHEMA: schema,
        PGHOST: process.env.WEIR_PG_HOST ?? '127.0.0.1',
        PGPORT: String(process.env.WEIR_PG_PORT ?? 5432),
        PGUSER: 'root',
        PGDATABASE: 'test',
      };
      const start = () => {
        const cli = startCli(
          ['run', path.join(FIXTURES, 'ha-pg-job.ts'), '--checkpoint-dir', root, '--ha', HA, '--ha-job', job, '--ha-lease', '1500', '--quiet'],
          { env },
        );
        started.push(cli);
        return cli;
      };
      try {
        const a = start();
        await waitForMatch(a, /leading job '\S+' as \S+ \(epoch \d+, lease 1500 ms\)$/m, 60_000, 'the first leader');
        const b = start();
        await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
        const jobDir = await jobDirOf(a, root);
        expect(await checkpointMoment(a, jobDir, 'after-complete', 3)).toBe(true);
        // Hold the lease row: the next checkpoint's _metadata becomes durable, its pointer waits, its transactions stay prepared.
        const lock = new pg.Client({ connectionString: HA });
        await lock.connect();
        await lock.query('BEGIN');
        await lock.query('SELECT 1 FROM weir_ha_leases WHERE job = $1 FOR UPDATE', [job]);
        const before = Math.max(...checkpointsIn(jobDir).completed);
        expect(await waitUntil(a, 'a durable checkpoint whose pointer waits', () => checkpointsIn(jobDir).completed.some((id) => id > before))).toBe(true);
        const prepared = await admin.query(`SELECT count(*)::int AS n FROM pg_prepared_xacts WHERE gid LIKE '%' || $1 || '%'`, [schema]);
        // The case this test guards: the sink's transactions of the unpublished checkpoint are prepared, not committed.
        expect(prepared.rows[0].n).toBeGreaterThan(0);
        a.child.kill('SIGKILL');
        await a.done;
        await lock.query('COMMIT');
        await lock.end();
        await waitForMatch(b, /leading job '\S+' as \S+ \(epoch \d+, lease 1500 ms\); taking over from checkpoint (\d+)/, 60_000, 'the takeover');
        const r = await within(120_000, b.done, () => b.output().stderr);
        expect(r.code, r.stderr).toBe(0);
        const dup = await admin.query(`SELECT k, n, count(*)::int AS c FROM ${schema}.out GROUP BY k, n HAVING count(*) > 1 LIMIT 5`);
        expect(dup.rows).toEqual([]);
        const perKey = await admin.query(`SELECT k, count(*)::int AS c, max(n) AS m FROM ${schema}.out GROUP BY k ORDER BY k`);
        const expected = Array.from({ length: 7 }, (_, i) => `k${i}`)
          .sort()
          .map((k) => {
            const c = Math.floor(12_000 / 7) + (Number(k.slice(1)) < 12_000 % 7 ? 1 : 0);
            return { k, c, m: c };
          });
        expect(perKey.rows).toEqual(expected);
        const left = await admin.query(`SELECT gid FROM pg_prepared_xacts`);
        expect(left.rows.filter((x: { gid: string }) => x.gid.includes(schema))).toEqual([]);
        console.log(`prepared transactions of the job when its leader was killed: ${prepared.rows[0].n}`);
      } finally {
        await drop();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'the leader cut off from PostgreSQL: a short cut is ridden out; a partition longer than the lease deposes it (exit 1) and the standby takes over, exactly once',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'weir-ha-'));
      const job = `ha-cut-${process.pid}`;
      jobs.push(job);
      const proxy = await TcpCutProxy.start(process.env.WEIR_PG_HOST ?? '127.0.0.1', Number(process.env.WEIR_PG_PORT ?? 5432));
      try {
        const env = { KILL_RATE: '2000', KILL_INTERVAL_MS: '100' };
        const viaProxy = `postgres://root@127.0.0.1:${proxy.port}/test`;
        const a = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', viaProxy, '--ha-job', job, '--ha-lease', '1500', '--quiet'], { env });
        started.push(a);
        await waitForMatch(a, /leading job '\S+' as \S+ \(epoch 1, lease 1500 ms\)$/m, 60_000, 'the first leader');
        const jobDir = await jobDirOf(a, root);
        const b = jobMaster(root, job, env);
        await waitForMatch(b, /standby: job '\S+' is led by/, 60_000, 'the standby');
        expect(await checkpointMoment(a, jobDir, 'after-complete', 2)).toBe(true);
        // A cut (a server restart, as the client sees it): the next renewal connects again.
        proxy.cut();
        expect(await checkpointMoment(a, jobDir, 'after-complete', 5), a.output().stderr).toBe(true);
        expect(a.output().stderr).not.toContain('lost the leadership');
        // A partition longer than the lease: the leader cannot renew; it stops and exits.
        proxy.block(true);
        const deposed = await within(60_000, a.done, () => a.output().stderr);
        expect(deposed.code).toBe(1);
        expect(deposed.stderr).toMatch(/lost the leadership of job '?ha-cut-\d+'? \(epoch 1\): no renewal succeeded within the lease/);
        await waitForMatch(b, /leading job '\S+' as \S+ \(epoch 2, lease 1500 ms\); taking over from checkpoint \d+/, 60_000, 'the takeover');
        const r = await within(120_000, b.done, () => b.output().stderr);
        expect(r.code, r.stderr).toBe(0);
        expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
      } finally {
        await proxy.close();
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
