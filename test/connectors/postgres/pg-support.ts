/**
 * Test support for the PostgreSQL connectors: a client of the local server (127.0.0.1:5432, trust
 * auth, database test; .ci/postgres-setup configures it) and a schema of its own per test, dropped
 * afterwards together with any prepared transaction of its sinks left behind.
 */
import pg from 'pg';
import type { RuntimeContext } from '../../../src/index.ts';
import type { PostgresConnectionOptions } from '../../../src/connectors/postgres/index.ts';

/** WEIR_PG_HOST and WEIR_PG_PORT (as .ci/postgres-setup reads them) point the tests at another server. */
export const CONNECTION: PostgresConnectionOptions = {
  host: process.env.WEIR_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.WEIR_PG_PORT ?? 5432),
  database: 'test',
  user: 'root',
};

let counter = 0;

export async function client(): Promise<pg.Client> {
  const c = new pg.Client({ ...CONNECTION });
  await c.connect();
  return c;
}

/** A fresh schema with table `t` of `ddl` columns; `drop` rolls back its prepared transactions and drops it. */
export async function freshSchema(ddl = 'k text NOT NULL, n integer NOT NULL'): Promise<{ schema: string; admin: pg.Client; drop(): Promise<void> }> {
  const schema = `weir_test_${process.pid}_${counter++}`;
  const admin = await client();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.t (${ddl})`);
  return {
    schema,
    admin,
    async drop() {
      for (const gid of await preparedOf(admin, schema)) await admin.query(`ROLLBACK PREPARED '${gid}'`);
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** Prepared transactions of sinks whose id starts with `schema` (the default id is `<schema>.<table>`). */
export async function preparedOf(c: pg.Client, schema: string): Promise<string[]> {
  const res = await c.query<{ gid: string }>('SELECT gid FROM pg_prepared_xacts WHERE gid LIKE $1 ORDER BY gid', [`weir:${schema}%`]);
  return res.rows.map((r) => r.gid);
}

/** `k:n` strings of table t, sorted. */
export async function rowsOf(c: pg.Client, schema: string): Promise<string[]> {
  const res = await c.query<{ k: string; n: number }>(`SELECT k, n FROM ${schema}.t`);
  return res.rows.map((r) => `${r.k}:${r.n}`).sort();
}

/** The context a writer of subtask `subtask` in run `runId` sees (a writer reads no more of it). */
export function writerContext(subtask: number, runId: string): RuntimeContext {
  return { uid: 'out', subtaskIndex: subtask, parallelism: 1, maxParallelism: 128, attempt: 0, runId, restored: false } as unknown as RuntimeContext;
}
