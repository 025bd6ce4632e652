/**
 * End-to-end SIGKILL test of the PostgreSQL connectors: `weir run cdc-kill-job.ts` (PostgreSQL CDC source ->
 * keyed sums -> two-phase PostgresSink) while the test inserts and updates source rows; each run is
 * killed (SIGKILL to its process group) at a seeded moment — before its first checkpoint, while a
 * checkpoint is half-written, after a completed one, or while a prepared transaction of the sink
 * waits for its COMMIT PREPARED — and the next run resumes with `--from <job dir>`. At the end the
 * aggregate table equals the aggregate computed from the source table, and no prepared transaction
 * is left. `npm test` runs 4 kills; `npm run soak:kill` runs 100 (WEIR_SOAK_KILLS); WEIR_SOAK_SEED
 * picks the first seed and replays a failing plan.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/core/time.ts';
import { dropCdcObjects } from '../connectors/postgres/cdc/cdc-support.ts';
import { CONNECTION, client } from '../connectors/postgres/pg-support.ts';
import { slotNameOf } from '../../src/connectors/postgres/cdc/cdc-names.ts';
import { CheckpointTracker, checkpointMoment, checkpointsIn, killGroup, waitUntil } from './kill-harness.ts';
import { END_ID } from './fixtures/cdc-kill-job.ts';
import { FIXTURES, startCli, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';

const KILLS = Number(process.env.WEIR_SOAK_KILLS ?? 4);
const FIRST_SEED = Number(process.env.WEIR_SOAK_SEED ?? 1);
const KILLS_PER_TRIAL = 4;
const JOB = path.join(FIXTURES, 'cdc-kill-job.ts');
const EVENT_TIMEOUT_MS = 45_000;
const FINISH_TIMEOUT_MS = 90_000;
const KEYS = 16;
const INITIAL_ROWS = 40;

type Moment = 'before-first' | 'during' | 'after-complete' | 'prepared';
const MOMENTS: readonly Moment[] = ['before-first', 'during', 'after-complete', 'prepared'];
interface Step {
  readonly moment: Moment;
  readonly nth: number;
}

/** Every four steps hold each moment once, in a seeded order; the checkpoint a step waits for is drawn too. */
function drawSteps(seed: number, count: number): Step[] {
  const r = new SeededRandom(seed);
  const steps: Step[] = [];
  while (steps.length < count) {
    const moments = [...MOMENTS];
    for (let i = moments.length - 1; i > 0; i--) {
      const j = r.int(i + 1);
      [moments[i], moments[j]] = [moments[j]!, moments[i]!];
    }
    for (const moment of moments) steps.push({ moment, nth: 1 + r.int(3) });
  }
  return steps.slice(0, count);
}

/** Inserts and updates source rows (seeded) until stopped; each transaction holds 1 to 4 of them. */
class Writer {
  private stopped = false;
  private ids = INITIAL_ROWS;
  private done: Promise<void> = Promise.resolve();
  transactions = 0;

  constructor(
    private readonly db: pg.Client,
    private readonly schema: string,
    private readonly r: SeededRandom,
  ) {}

  start(): void {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await this.db.query('BEGIN');
      const ops = 1 + this.r.int(4);
      for (let i = 0; i < ops; i++) {
        if (this.r.int(3) === 0) {
          await this.db.query(`UPDATE ${this.schema}.src SET amount = amount + $2 WHERE id = $1`, [1 + this.r.int(this.ids), 1 + this.r.int(50)]);
        } else {
          this.ids++;
          await this.db.query(`INSERT INTO ${this.schema}.src VALUES ($1, $2, $3)`, [this.ids, `k${this.r.int(KEYS)}`, this.r.int(100)]);
        }
      }
      await this.db.query('COMMIT');
      this.transactions++;
      // a short pause on the server keeps the writer from crowding the loaded machine
      await this.db.query('SELECT pg_sleep(0.002)');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

interface Run {
  readonly cli: CliRun;
  readonly jobDir: string;
}

async function startRun(root: string, from: string | null, env: Readonly<Record<string, string>>): Promise<Run> {
  const args = ['run', JOB, '--checkpoint-dir', root, ...(from === null ? [] : ['--from', from])];
  const cli = startCli(args, { env, detached: true });
  try {
    const m = await waitForMatch(cli, /^control: \S+ \(job ([A-Za-z0-9._-]+)\)$/m, EVENT_TIMEOUT_MS, "the 'control:' line");
    return { cli, jobDir: path.join(root, m[1]!) };
  } catch (err) {
    await killGroup(cli);
    throw err;
  }
}

async function preparedOfSink(db: pg.Client, schema: string): Promise<string[]> {
  const res = await db.query<{ gid: string }>('SELECT gid FROM pg_prepared_xacts WHERE left(gid, $2) = $1', [
    `weir:${schema}.agg:`,
    `weir:${schema}.agg:`.length,
  ]);
  return res.rows.map((r) => r.gid);
}

/** Waits for the step's moment in a started run; false when the run ended before it. */
async function reachMoment(db: pg.Client, schema: string, run: Run, step: Step): Promise<boolean> {
  switch (step.moment) {
    case 'before-first':
      return true;
    case 'during':
    case 'after-complete':
      return checkpointMoment(run.cli, run.jobDir, step.moment, step.nth, EVENT_TIMEOUT_MS);
    case 'prepared': {
      // between PREPARE TRANSACTION and COMMIT PREPARED of the sink, after nth - 1 completed checkpoints
      const tracker = new CheckpointTracker(run.jobDir);
      return waitUntil(
        run.cli,
        'a prepared transaction of the sink',
        async () => {
          tracker.poll();
          return tracker.completedSeen.size >= step.nth - 1 && (await preparedOfSink(db, schema)).length > 0;
        },
        EVENT_TIMEOUT_MS,
      );
    }
  }
}

async function aggregateOf(db: pg.Client, sql: string): Promise<string[]> {
  const res = await db.query<{ k: string; total: string; n: string }>(sql);
  return res.rows.map((r) => `${r.k}:${r.total}:${r.n}`).sort();
}

interface Trial {
  readonly kills: Array<Step & { completed: number[] }>;
  readonly code: number | null;
  readonly stderr: string;
  readonly transactions: number;
}

async function runTrial(seed: number, steps: readonly Step[], root: string, db: pg.Client, schema: string): Promise<Trial> {
  const env = { PGHOST: CONNECTION.host!, PGPORT: String(CONNECTION.port), PGDATABASE: 'test', PGUSER: 'root', CDC_SCHEMA: schema };
  const writerDb = await client();
  const writer = new Writer(writerDb, schema, new SeededRandom(seed * 7919));
  const kills: Trial['kills'] = [];
  let latest: string | null = null;
  // changes flow from the start: into the first snapshot, around every kill and resume
  writer.start();
  try {
    for (const step of steps) {
      const run = await startRun(root, latest, env);
      let reached = false;
      try {
        reached = await reachMoment(db, schema, run, step);
      } finally {
        await killGroup(run.cli);
      }
      const seen = checkpointsIn(run.jobDir);
      if (!reached) throw new Error(`seed ${seed}: run ended before ${step.moment}#${step.nth}:\n${run.cli.output().stderr}`);
      kills.push({ ...step, completed: seen.completed });
      if (seen.completed.length > 0) latest = run.jobDir;
    }
  } finally {
    await writer.stop();
    await writerDb.end();
  }
  await db.query(`INSERT INTO ${schema}.src VALUES (${END_ID}, 'end', 0)`);
  const last = await startRun(root, latest, env);
  try {
    const result = await within(FINISH_TIMEOUT_MS, last.cli.done, () => `the last run did not finish; stderr:\n${last.cli.output().stderr}`);
    return { kills, code: result.code, stderr: result.stderr, transactions: writer.transactions };
  } finally {
    await killGroup(last.cli);
  }
}

describe('weir run of a CDC -> aggregate -> PostgresSink job under SIGKILL', () => {
  it(`${KILLS} kills at seeded moments (one between PREPARE and COMMIT per four): the aggregate table equals the source's, no prepared transaction left`, {
    timeout: 120_000 + KILLS * 20_000,
  }, async () => {
    const db = await client();
    const seen: Record<Moment, number> = { 'before-first': 0, during: 0, 'after-complete': 0, prepared: 0 };
    let kills = 0;
    let transactions = 0;
    try {
      for (let seed = FIRST_SEED; kills < KILLS; seed++) {
        const steps = drawSteps(seed, Math.min(KILLS_PER_TRIAL, KILLS - kills));
        const schema = `weir_cdckill_${process.pid}_${seed}`;
        const root = await mkdtemp(path.join(os.tmpdir(), `weir-cdc-kill-${seed}-`));
        await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await db.query(`CREATE SCHEMA ${schema}`);
        await db.query(`CREATE TABLE ${schema}.src (id integer PRIMARY KEY, k text NOT NULL, amount integer NOT NULL)`);
        await db.query(`ALTER TABLE ${schema}.src REPLICA IDENTITY FULL`);
        await db.query(`CREATE TABLE ${schema}.agg (k text PRIMARY KEY, total bigint NOT NULL, n integer NOT NULL)`);
        await db.query(`INSERT INTO ${schema}.src SELECT g, 'k' || (g % ${KEYS}), g FROM generate_series(1, ${INITIAL_ROWS}) g`);
        try {
          const trial = await runTrial(seed, steps, root, db, schema);
          const where = `seed ${seed}, steps ${steps.map((x) => `${x.moment}#${x.nth}`).join(', ')}; kills: ${JSON.stringify(trial.kills)}`;
          expect(trial.code, `${where}\n${trial.stderr}`).toBe(0);
          const reference = await aggregateOf(db, `SELECT k, sum(amount)::text AS total, count(*)::text AS n FROM ${schema}.src GROUP BY k`);
          expect(await aggregateOf(db, `SELECT k, total::text AS total, n::text AS n FROM ${schema}.agg`), where).toEqual(reference);
          expect(await preparedOfSink(db, schema), where).toEqual([]);
          for (const k of trial.kills) seen[k.moment]++;
          kills += trial.kills.length;
          transactions += trial.transactions;
        } finally {
          await dropCdcObjects(db, slotNameOf(schema));
          for (const gid of await preparedOfSink(db, schema)) await db.query(`ROLLBACK PREPARED '${gid}'`);
          await db.query(`DROP SCHEMA ${schema} CASCADE`);
          await rm(root, { recursive: true, force: true });
        }
      }
    } finally {
      await db.end();
    }
    process.stdout.write(
      `cdc kill soak: ${kills} kills (${Object.entries(seen)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}), ${transactions} source transactions; every aggregate exact\n`,
    );
    expect(seen.prepared).toBeGreaterThan(0);
  });
});
