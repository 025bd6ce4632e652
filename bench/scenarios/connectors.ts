/**
 * connectors: rows per second into PostgreSQL through the exactly-once two-phase sink, against a
 * hand-written loop of the same batched INSERTs on the same client library, interleaved over rounds;
 * the same rows by COPY; and changes per second through the CDC source.
 *
 *   pg2pc   a Weir job (parallelism 1): generated rows -> PostgresSink (prepared transaction per
 *           checkpoint, checkpoints every `checkpointIntervalMs`, batches of `batchRows`), timed
 *           from execute to the job's end (its final checkpoint committed)
 *   plain   one pg client inserting the same rows in batches of `batchRows`, each batch its own
 *           autocommitted statement
 *   copy    the same client writing the same rows with COPY FROM STDIN, `batchRows` rows per COPY
 *           (bench/lib/pg-copy.ts; the sink writes multi-row INSERTs): what COPY would gain it
 *   cdc     `cdcChanges` row inserts (transactions of `cdcTransactionRows`) committed while no job
 *           reads the slot, then a Weir job restored at the slot's position streams them through
 *           PostgresCdcSource into a counting operator; timed from execute to the job's end
 *   cdc_snapshot  the initial copy of a table of `cdcChanges` rows through the source, timed likewise
 *
 * Then the Redis Streams and NATS JetStream sources and sinks, each against a hand-written loop
 * (bench/lib/stream-connectors.ts).
 *
 * The server is the local one (PGHOST/PGPORT/PGDATABASE/PGUSER, else 127.0.0.1:5432, database
 * test, user root); each variant writes into a fresh table of a schema of its own, dropped at the end.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import pg from 'pg';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import { PostgresCdcSource, PostgresSink } from '../../src/connectors/postgres/index.ts';
import type { ChangeRecord, PostgresConnectionOptions } from '../../src/connectors/postgres/index.ts';
import { insertStatement, qualified } from '../../src/connectors/postgres/sql.ts';
import { copyRows } from '../lib/pg-copy.ts';
import { streamConnectorFigures } from '../lib/stream-connectors.ts';
import { buildResult, median, parseScenarioArgs, publishResult, runScenario, startTimer, type Figures } from '../lib/result.ts';

const SCENARIO = 'connectors';
const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  rows: args.quick ? 20_000 : 300_000,
  rounds: args.quick ? 1 : 3,
  batchRows: 1000,
  checkpointIntervalMs: 500,
  cdcChanges: args.quick ? 20_000 : 200_000,
  cdcTransactionRows: 100,
  /** Messages per source and sink run of the Redis and NATS variants. */
  streamMessages: args.quick ? 5_000 : 100_000,
};

const CONNECTION: PostgresConnectionOptions = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  database: process.env.PGDATABASE ?? 'test',
  user: process.env.PGUSER ?? 'root',
};
const SCHEMA = `weir_bench_${process.pid}`;
const TABLE = 't';
const COLUMNS = ['id', 'k', 'v'] as const;

type Row = readonly [number, string, number];
const rowAt = (i: number): Row => [i, `key-${i % 1000}`, i * 7];

type Variant = 'pg2pc' | 'plain' | 'copy';
const VARIANTS: readonly Variant[] = ['pg2pc', 'plain', 'copy'];

async function runPg2pc(): Promise<void> {
  const env = StreamEnvironment.create({ parallelism: 1, checkpointing: { intervalMs: params.checkpointIntervalMs } });
  env
    .generate({ count: params.rows }, rowAt)
    .uid('gen')
    .sinkTo(new PostgresSink<Row>({ schema: SCHEMA, table: TABLE, columns: COLUMNS, toRow: (r) => r, batchRows: params.batchRows, connection: CONNECTION }))
    .uid('out');
  const result = await env.execute('bench-pg2pc');
  if (result.status !== 'FINISHED') throw new Error(`pg2pc job ended ${result.status}`);
}

async function runPlain(client: pg.Client): Promise<void> {
  const target = { schema: SCHEMA, table: TABLE, columns: COLUMNS };
  for (let start = 0; start < params.rows; start += params.batchRows) {
    const n = Math.min(params.batchRows, params.rows - start);
    const values: unknown[] = [];
    for (let i = start; i < start + n; i++) values.push(...rowAt(i));
    await client.query({ name: n === params.batchRows ? 'bench_insert' : undefined, text: insertStatement(target, n), values });
  }
}

async function runCopy(client: pg.Client): Promise<void> {
  const table = qualified(SCHEMA, TABLE);
  for (let start = 0; start < params.rows; start += params.batchRows) {
    const rows: Row[] = [];
    for (let i = start; i < Math.min(params.rows, start + params.batchRows); i++) rows.push(rowAt(i));
    await copyRows(client, table, COLUMNS, rows);
  }
}

// ---- CDC ----

const CDC_TABLE = 'changes';
const CDC_ID = `bench_${process.pid}`;
/** The last row: the source ends after it (the largest id, so a copy also reads it last). */
const CDC_END = 2_147_483_647;

/** The source -> a counter (the records go nowhere): what the source and the engine sustain. */
function cdcJob(root: string, snapshot: boolean): { env: StreamEnvironment; counted: () => number } {
  const env = StreamEnvironment.create({ parallelism: 1, checkpointStorage: root, checkpointing: { retention: 'retain-on-cancel' } });
  let n = 0;
  const count = (): void => {
    n++;
  };
  env
    .fromSource(
      new PostgresCdcSource({
        tables: [`${SCHEMA}.${CDC_TABLE}`],
        id: CDC_ID,
        snapshot,
        connection: CONNECTION,
        endWhen: (c: ChangeRecord) => c.kind === 'insert' && c.after.id === CDC_END,
      }),
    )
    .uid('cdc')
    .flatMap<never>(count)
    .uid('count')
    .sinkTo(new CollectSink<never>())
    .uid('out');
  return { env, counted: () => n };
}

async function dropCdc(admin: pg.Client): Promise<void> {
  const slot = `weir_cdc_${CDC_ID}`;
  for (let i = 0; i < 200; i++) {
    const res = await admin.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    if (res.rows.length === 0) break;
    if (!res.rows[0]!.active) {
      await admin.query('SELECT pg_drop_replication_slot($1)', [slot]);
      break;
    }
    await admin.query('SELECT pg_sleep(0.05)');
  }
  await admin.query(`DROP PUBLICATION IF EXISTS weir_cdc_${CDC_ID}`);
}

/** Changes per second streamed through the source: the slot is created by a first job, the changes committed while none reads it, a second job streams them. */
async function runCdc(admin: pg.Client): Promise<number> {
  await admin.query(`DROP TABLE IF EXISTS ${SCHEMA}.${CDC_TABLE}`);
  await admin.query(`CREATE TABLE ${SCHEMA}.${CDC_TABLE} (id integer PRIMARY KEY, k text NOT NULL, v bigint NOT NULL)`);
  const root = mkdtempSync(path.join(os.tmpdir(), 'weir-bench-cdc-'));
  try {
    const first = cdcJob(root, false);
    const client = await first.env.executeAsync('bench-cdc-setup');
    for (;;) {
      const res = await admin.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND confirmed_flush_lsn IS NOT NULL', [`weir_cdc_${CDC_ID}`]);
      if (res.rowCount === 1) break;
      await admin.query('SELECT pg_sleep(0.01)');
    }
    // a first change through the source: it streams, so the checkpoint holds its position
    await admin.query(`INSERT INTO ${SCHEMA}.${CDC_TABLE} VALUES (-1, 'first', 0)`);
    while (first.counted() === 0) await admin.query('SELECT pg_sleep(0.01)');
    await client.triggerCheckpoint();
    await client.cancel();
    await client.result.catch(() => {});
    for (let start = 0; start < params.cdcChanges; start += params.cdcTransactionRows) {
      const end = Math.min(params.cdcChanges, start + params.cdcTransactionRows) - 1;
      await admin.query(`INSERT INTO ${SCHEMA}.${CDC_TABLE} SELECT g, 'key-' || (g % 1000), g * 7 FROM generate_series(${start}, ${end}) g`);
    }
    await admin.query(`INSERT INTO ${SCHEMA}.${CDC_TABLE} VALUES (${CDC_END}, 'end', 0)`);
    const second = cdcJob(root, false);
    const elapsed = startTimer();
    const result = await second.env.execute('bench-cdc', { restoreFrom: path.join(root, client.jobId) });
    const ms = elapsed().ms;
    if (result.status !== 'FINISHED' || second.counted() !== params.cdcChanges + 1) throw new Error(`cdc: ${result.status}, ${second.counted()} changes`);
    return params.cdcChanges / (ms / 1000);
  } finally {
    await dropCdc(admin);
    rmSync(root, { recursive: true, force: true });
  }
}

/** Rows per second of the source's initial copy of a table of `cdcChanges` rows. */
async function runCdcSnapshot(admin: pg.Client): Promise<number> {
  await admin.query(`DROP TABLE IF EXISTS ${SCHEMA}.${CDC_TABLE}`);
  await admin.query(`CREATE TABLE ${SCHEMA}.${CDC_TABLE} (id integer PRIMARY KEY, k text NOT NULL, v bigint NOT NULL)`);
  await admin.query(`INSERT INTO ${SCHEMA}.${CDC_TABLE} SELECT g, 'key-' || (g % 1000), g * 7 FROM generate_series(0, ${params.cdcChanges - 1}) g`);
  await admin.query(`INSERT INTO ${SCHEMA}.${CDC_TABLE} VALUES (${CDC_END}, 'end', 0)`);
  const root = mkdtempSync(path.join(os.tmpdir(), 'weir-bench-cdc-'));
  try {
    const job = cdcJob(root, true);
    const elapsed = startTimer();
    const result = await job.env.execute('bench-cdc-snapshot');
    const ms = elapsed().ms;
    if (result.status !== 'FINISHED' || job.counted() !== params.cdcChanges + 1) throw new Error(`cdc snapshot: ${result.status}, ${job.counted()} rows`);
    return params.cdcChanges / (ms / 1000);
  } finally {
    await dropCdc(admin);
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const admin = new pg.Client(CONNECTION);
  await admin.connect();
  const rowsPerSec: Record<Variant, number[]> = { pg2pc: [], plain: [], copy: [] };
  const cdc: number[] = [];
  const cdcSnapshot: number[] = [];
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    for (let round = 0; round < params.rounds; round++) {
      for (const variant of VARIANTS) {
        await admin.query(`DROP TABLE IF EXISTS ${SCHEMA}.${TABLE}; DROP TABLE IF EXISTS ${SCHEMA}.weir_sink_commits`);
        await admin.query(`CREATE TABLE ${SCHEMA}.${TABLE} (id integer NOT NULL, k text NOT NULL, v bigint NOT NULL)`);
        const elapsed = startTimer();
        if (variant === 'pg2pc') await runPg2pc();
        else if (variant === 'plain') await runPlain(admin);
        else await runCopy(admin);
        const ms = elapsed().ms;
        const count = Number((await admin.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCHEMA}.${TABLE}`)).rows[0]!.n);
        if (count !== params.rows) throw new Error(`${variant}: ${count} rows in the table, expected ${params.rows}`);
        rowsPerSec[variant].push(params.rows / (ms / 1000));
        console.log(
          `[${SCENARIO}] round ${round + 1} ${variant}: ${params.rows} rows in ${(ms / 1000).toFixed(2)} s, ${Math.round(params.rows / (ms / 1000))} rows/s`,
        );
      }
      cdc.push(await runCdc(admin));
      cdcSnapshot.push(await runCdcSnapshot(admin));
      console.log(
        `[${SCENARIO}] round ${round + 1} cdc: ${Math.round(cdc.at(-1)!)} changes/s streamed, ${Math.round(cdcSnapshot.at(-1)!)} rows/s copied (${params.cdcChanges})`,
      );
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
    await admin.end();
  }
  const metrics: Figures = {
    pg2pc_rows_per_sec: median(rowsPerSec.pg2pc),
    plain_rows_per_sec: median(rowsPerSec.plain),
    copy_rows_per_sec: median(rowsPerSec.copy),
    cdc_changes_per_sec: median(cdc),
    cdc_snapshot_rows_per_sec: median(cdcSnapshot),
  };
  const ratios: Figures = {
    pg2pc_vs_plain: metrics.pg2pc_rows_per_sec! / metrics.plain_rows_per_sec!,
    copy_vs_insert: metrics.copy_rows_per_sec! / metrics.plain_rows_per_sec!,
  };
  // Redis Streams and NATS JetStream sources and sinks (bench/lib/stream-connectors.ts)
  const streams = await streamConnectorFigures(
    { messages: params.streamMessages, rounds: params.rounds, checkpointIntervalMs: params.checkpointIntervalMs },
    (line) => console.log(`[${SCENARIO}] ${line}`),
  );
  Object.assign(metrics, streams.metrics);
  Object.assign(ratios, streams.ratios);
  const result = buildResult(SCENARIO, params, metrics, ratios);
  publishResult(result, args.outDir);
}

runScenario(SCENARIO, main);
