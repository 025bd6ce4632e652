/**
 * Leader-kill soak of `weir run --ha` (PostgreSQL as the HA store): a leader and a standby of the
 * kill job (FileSink, exactly once); the leader is SIGKILLed at a seeded moment, the standby takes
 * over from the newest published checkpoint, a new standby starts, and so on; the last leader
 * finishes and the output is checked by the kill oracle. Moments: a checkpoint half-written, one
 * just completed, and one whose `_metadata` is durable while its pointer cannot be published yet
 * (the test holds the lease row FOR UPDATE, so the leader is caught between `_metadata` and the
 * notifications that make sinks commit; it may also give up its leadership itself while it waits).
 * `npm test` runs 3 kills; `npm run soak:kill` 50 (WEIR_SOAK_HA_KILLS). Takeover times (kill to
 * the new leader's running line) are printed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/core/time.ts';
import { checkpointMoment, checkpointsIn, KILL_JOB, killGroup, waitUntil } from './kill-harness.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { startCli, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

const HA = `postgres://root@${process.env.WEIR_PG_HOST ?? '127.0.0.1'}:${process.env.WEIR_PG_PORT ?? 5432}/test`;
const KILLS = Number(process.env.WEIR_SOAK_HA_KILLS ?? 3);
const FIRST_SEED = Number(process.env.WEIR_SOAK_SEED ?? 1);
const KILLS_PER_TRIAL = 4;
const LEASE_MS = 1500;
type Moment = 'during' | 'after-complete' | 'held-publish';
const MOMENTS: readonly Moment[] = ['during', 'after-complete', 'held-publish'];

const admin = new pg.Client({ connectionString: HA });
const jobs: string[] = [];
afterAll(async () => {
  for (const j of jobs) {
    await admin.query('DELETE FROM weir_ha_leases WHERE job = $1', [j]).catch(() => {});
    await admin.query('DELETE FROM weir_ha_pointers WHERE job = $1', [j]).catch(() => {});
    await admin.query('DELETE FROM weir_ha_submissions WHERE job = $1', [j]).catch(() => {});
  }
  await admin.end();
});

interface JobMasterRun {
  readonly cli: CliRun;
}

function startJobMaster(root: string, job: string): JobMasterRun {
  const env = { KILL_RATE: '2500', KILL_INTERVAL_MS: '100', KILL_PAD_BYTES: '2000' };
  const cli = startCli(['run', KILL_JOB, '--checkpoint-dir', root, '--ha', HA, '--ha-job', job, '--ha-lease', String(LEASE_MS), '--quiet'], {
    env,
    detached: true,
  });
  return { cli };
}

async function jobDirOf(cli: CliRun, root: string): Promise<string> {
  const m = await waitForMatch(cli, /^control: \S+ \(job (\S+)\)$/m, 60_000, 'the control line');
  return path.join(root, m[1]!);
}

/** Holds the job's lease row FOR UPDATE until the returned function releases it: the leader's publish waits. */
async function holdLeaseRow(job: string): Promise<() => Promise<void>> {
  const c = new pg.Client({ connectionString: HA });
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT 1 FROM weir_ha_leases WHERE job = $1 FOR UPDATE', [job]);
  return async () => {
    await c.query('COMMIT').catch(() => {});
    await c.end();
  };
}

interface TrialResult {
  readonly kills: Array<{ moment: Moment; takeoverMs: number; deposedItself: boolean }>;
  readonly final: { code: number | null; stderr: string };
}

async function trial(seed: number, count: number): Promise<TrialResult> {
  const random = new SeededRandom(seed);
  const root = await mkdtemp(path.join(os.tmpdir(), `weir-ha-soak-${seed}-`));
  const job = `ha-soak-${process.pid}-${seed}`;
  jobs.push(job);
  const runs: JobMasterRun[] = [];
  const kills: TrialResult['kills'] = [];
  try {
    let leader = startJobMaster(root, job);
    runs.push(leader);
    await waitForMatch(leader.cli, /leading job '\S+' as \S+ \(epoch \d+/, 60_000, 'the first leader');
    for (let k = 0; k < count; k++) {
      const standby = startJobMaster(root, job);
      runs.push(standby);
      const joined = await waitForMatch(standby.cli, /standby: job '\S+' is led by|has ended \(its last leader finished it\)/, 60_000, 'the standby');
      if (joined[0].startsWith('has ended')) {
        // The leader finished the job before this standby joined (a slow start on a busy machine).
        return { kills, final: await leader.cli.done };
      }
      const jobDir = await jobDirOf(leader.cli, root);
      // The moments in turn (so the three kills of `npm test` reach each), the checkpoint drawn.
      const moment = MOMENTS[(seed - 1 + k) % MOMENTS.length]!;
      const nth = 2 + random.int(3);
      let release: (() => Promise<void>) | null = null;
      let reached: boolean;
      if (moment === 'held-publish') {
        reached = await checkpointMoment(leader.cli, jobDir, 'after-complete', nth);
        if (reached) {
          const before = Math.max(0, ...checkpointsIn(jobDir).completed);
          release = await holdLeaseRow(job);
          reached = await waitUntil(leader.cli, `a checkpoint after ${before} durable while its pointer waits`, () =>
            checkpointsIn(jobDir).completed.some((id) => id > before),
          );
        }
      } else {
        reached = await checkpointMoment(leader.cli, jobDir, moment, nth);
      }
      const exited = leader.cli.child.exitCode !== null || leader.cli.child.signalCode !== null;
      await killGroup(leader.cli);
      const killedAt = Date.now();
      await release?.();
      if (!reached) {
        // The leader finished before the moment: its standby learns the job ended.
        await standby.cli.done;
        return { kills, final: await leader.cli.done };
      }
      const deposed = /lost the leadership/.test(leader.cli.output().stderr);
      await waitForMatch(standby.cli, /leading job '\S+' as \S+ \(epoch \d+, lease \d+ ms\)/, 60_000, 'the takeover');
      await waitForMatch(standby.cli, /running attempt 0/, 60_000, 'the new leader running');
      kills.push({ moment, takeoverMs: Date.now() - killedAt, deposedItself: exited || deposed });
      leader = standby;
    }
    const final = await within(180_000, leader.cli.done, () => leader.cli.output().stderr);
    const check = checkKillOutput(outputDirOf(root), 20_000, KEYS);
    expect(check.problems, `seed ${seed}: ${JSON.stringify(kills)}`).toEqual([]);
    const rows = await admin.query('SELECT holder FROM weir_ha_leases WHERE job = $1', [job]);
    expect(rows.rows, `seed ${seed}: the lease ends with the job`).toEqual([{ holder: '' }]);
    return { kills, final };
  } finally {
    for (const r of runs) await killGroup(r.cli);
    await rm(root, { recursive: true, force: true });
  }
}

describe('weir run --ha under leader SIGKILLs', () => {
  it(`${KILLS} leader kills at seeded moments (half-written, completed, held between _metadata and its pointer): a standby takes over each time, output exactly once`, {
    timeout: 120_000 + KILLS * 20_000,
  }, async () => {
    await admin.connect();
    const takeovers: number[] = [];
    const byMoment: Record<Moment, number> = { during: 0, 'after-complete': 0, 'held-publish': 0 };
    let kills = 0;
    let deposed = 0;
    for (let seed = FIRST_SEED; kills < KILLS; seed++) {
      const t = await trial(seed, Math.min(KILLS_PER_TRIAL, KILLS - kills));
      expect(t.final.code, `seed ${seed}\n${t.final.stderr}`).toBe(0);
      for (const k of t.kills) {
        byMoment[k.moment]++;
        takeovers.push(k.takeoverMs);
        if (k.deposedItself) deposed++;
      }
      kills += t.kills.length;
      if (t.kills.length === 0) throw new Error(`seed ${seed}: the job finished before its first kill`);
    }
    takeovers.sort((a, b) => a - b);
    console.log(
      `${kills} leader kills (${JSON.stringify(byMoment)}; ${deposed} leaders had deposed themselves first); takeover (kill to running again) median ${takeovers[Math.floor(takeovers.length / 2)]} ms, max ${takeovers.at(-1)} ms, lease ${LEASE_MS} ms`,
    );
    expect(kills).toBeGreaterThanOrEqual(KILLS);
  });
});
