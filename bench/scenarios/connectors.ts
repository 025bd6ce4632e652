/**
 * connectors: rows per second into PostgreSQL through the exactly-once two-phase sink, against a
 * hand-written loop of the same batched INSERTs on the same client library, interleaved over rounds.
 *
 *   pg2pc   a Weir job (parallelism 1): generated rows -> PostgresSink (prepared transaction per
 *           checkpoint, checkpoints every `checkpointIntervalMs`, batches of `batchRows`), timed
 *           from execute to the job's end (its final checkpoint committed)
 *   plain   one pg client inserting the same rows in batches of `batchRows`, each batch its own
 *           autocommitted statement
 *
 * Then the Redis Streams and NATS JetStream sources and sinks, each against a hand-written loop
 * (bench/lib/stream-connectors.ts).
 *
 * The server is the local one (PGHOST/PGPORT/PGDATABASE/PGUSER, else 127.0.0.1:5432, database
 * test, user root); each variant writes into a fresh table of a schema of its own, dropped at the end.
 */
import pg from 'pg';
import { PostgresSink, StreamEnvironment } from '../../src/index.ts';
import type { PostgresConnectionOptions } from '../../src/index.ts';
import { insertStatement } from '../../src/connectors/postgres/sql.ts';
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

type Variant = 'pg2pc' | 'plain';
const VARIANTS: readonly Variant[] = ['pg2pc', 'plain'];

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

async function main(): Promise<void> {
  const admin = new pg.Client(CONNECTION);
  await admin.connect();
  const rowsPerSec: Record<Variant, number[]> = { pg2pc: [], plain: [] };
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    for (let round = 0; round < params.rounds; round++) {
      for (const variant of VARIANTS) {
        await admin.query(`DROP TABLE IF EXISTS ${SCHEMA}.${TABLE}; DROP TABLE IF EXISTS ${SCHEMA}.weir_sink_commits`);
        await admin.query(`CREATE TABLE ${SCHEMA}.${TABLE} (id integer NOT NULL, k text NOT NULL, v bigint NOT NULL)`);
        const elapsed = startTimer();
        if (variant === 'pg2pc') await runPg2pc();
        else await runPlain(admin);
        const ms = elapsed().ms;
        const count = Number((await admin.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCHEMA}.${TABLE}`)).rows[0]!.n);
        if (count !== params.rows) throw new Error(`${variant}: ${count} rows in the table, expected ${params.rows}`);
        rowsPerSec[variant].push(params.rows / (ms / 1000));
        console.log(
          `[${SCENARIO}] round ${round + 1} ${variant}: ${params.rows} rows in ${(ms / 1000).toFixed(2)} s, ${Math.round(params.rows / (ms / 1000))} rows/s`,
        );
      }
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
    await admin.end();
  }
  const metrics: Figures = { pg2pc_rows_per_sec: median(rowsPerSec.pg2pc), plain_rows_per_sec: median(rowsPerSec.plain) };
  const ratios: Figures = { pg2pc_vs_plain: metrics.pg2pc_rows_per_sec! / metrics.plain_rows_per_sec! };
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
