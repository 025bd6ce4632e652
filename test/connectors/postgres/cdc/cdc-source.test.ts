/**
 * The PostgreSQL CDC source against the local server: the initial snapshot followed by the change
 * stream as typed records; recovery from checkpoints through task failures (checkpoints falling
 * inside transactions) with every change exactly once; the slot's confirmed position moving only
 * when a checkpoint completes; a server that is down.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CollectSink, ConnectorError, InjectedFault, JobFailedError, StreamEnvironment } from '../../../../src/index.ts';
import { PostgresCdcSource } from '../../../../src/connectors/postgres/index.ts';
import { isRetryable } from '../../../../src/core/errors.ts';
import type { ListState, Source, SourceReader } from '../../../../src/index.ts';
import type { ChangeRecord, PostgresCdcSourceOptions } from '../../../../src/connectors/postgres/index.ts';
import { whenRunning } from '../../../support/clients.ts';
import { tempDir, until } from '../../../support/jobs.ts';
import { ManualEnvironment } from '../../../support/manual-env.ts';
import { CONNECTION } from '../pg-support.ts';
import { cdcSchema, confirmedLsn, show } from './cdc-support.ts';
import { formatLsn, parseLsn } from '../../../../src/connectors/postgres/cdc/lsn.ts';
import { type CdcStateV1, POSITION_V1 } from '../../../../src/connectors/postgres/cdc/cdc-position-v1.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup() {
  const s = await cdcSchema();
  cleanups.push(s.drop);
  return s;
}

const END_ID = -1;

function source(schema: string, id: string, extra: Partial<PostgresCdcSourceOptions> = {}): PostgresCdcSource {
  return new PostgresCdcSource({
    tables: [`${schema}.t`],
    id,
    connection: CONNECTION,
    endWhen: (c) => c.kind === 'insert' && c.after.id === END_ID,
    ...extra,
  });
}

/** The source -> a map that sees every change -> a collecting sink. */
function job(o: {
  schema: string;
  id: string;
  restarts?: number;
  intervalMs?: number;
  seen?: ChangeRecord[];
  fail?: (n: number) => void;
  root?: string;
  endId?: number;
  retained?: number;
}) {
  const env = StreamEnvironment.create({
    parallelism: 1,
    checkpointStorage: join(o.root ?? tempDir('weir-cdc-'), 'chk'),
    checkpointing: { ...(o.intervalMs === undefined ? {} : { intervalMs: o.intervalMs }), retention: 'retain-on-cancel', retained: o.retained ?? 1 },
    restartStrategy: (o.restarts ?? 0) === 0 ? { type: 'none' } : { type: 'fixed-delay', attempts: o.restarts!, delayMs: 5 },
  });
  const sink = new CollectSink<string>();
  let n = 0;
  env
    .fromSource(source(o.schema, o.id, o.endId === undefined ? {} : { endWhen: (c) => c.kind === 'insert' && c.after.id === o.endId }))
    .uid('cdc')
    .map((c: ChangeRecord) => {
      o.seen?.push(c);
      o.fail?.(++n);
      return show(c);
    })
    .uid('show')
    .name('show')
    .sinkTo(sink)
    .uid('out');
  return { env, sink };
}

/** A source as the CDC source was before it read splits: it writes `state` (format 1) into the operator state it used, and emits nothing. */
function legacySource(state: unknown): Source<ChangeRecord> {
  return {
    name: 'legacy-cdc',
    bounded: false,
    createReader(): SourceReader<ChangeRecord> {
      let list: ListState<CdcStateV1> | null = null;
      return {
        open: (ctx) => {
          list = ctx.getUnionListState(POSITION_V1);
        },
        poll: () => ({ status: 'wait', delayMs: 5 }),
        snapshotState: () => list!.update([state as CdcStateV1]),
        close: () => {},
      };
    },
  };
}

/** Every emitted change (`show` lines) replayed over an empty table, as id -> v; a change that does not fit the table so far fails the test. */
function replayed(lines: readonly string[]): Map<number, number> {
  const table = new Map<number, number>();
  for (const line of lines) {
    const m = /^([SIUD]) (-?\d+) v=(-?\d+)(?:->(-?\d+))?$/.exec(line)!;
    const [op, rowId, v, after] = [m[1]!, Number(m[2]), Number(m[3]), m[4] === undefined ? null : Number(m[4])];
    if (op === 'S' || op === 'I') {
      expect(table.has(rowId), `${line}: row already there`).toBe(false);
      table.set(rowId, v);
    } else {
      expect(table.get(rowId), `${line}: old value`).toBe(v);
      if (op === 'U') table.set(rowId, after!);
      else table.delete(rowId);
    }
  }
  return table;
}

async function tableOf(admin: import('pg').Client, schema: string): Promise<Map<number, number>> {
  const res = await admin.query<{ id: number; v: number }>(`SELECT id, v FROM ${schema}.t`);
  return new Map(res.rows.map((r) => [r.id, r.v]));
}

/**
 * Rows 1..`rows` in the table, a first job that completes a checkpoint inside their copy and is
 * cancelled: its checkpoint directory, job id and committed output (fewer rows than the table).
 */
async function checkpointInsideCopy(admin: import('pg').Client, schema: string, id: string, rows: number) {
  await admin.query(`INSERT INTO ${schema}.t SELECT g, g FROM generate_series(1, ${rows}) g`);
  const root = tempDir('weir-cdc-');
  const seen: ChangeRecord[] = [];
  const first = job({ schema, id, seen, root });
  // one record per step: the copy takes long enough for a checkpoint inside it
  const client = await first.env.executeAsync('first', { sourceBatchRecords: 1, elementsPerStep: 1 });
  await until('100 snapshot rows to pass', () => seen.length >= 100);
  await client.triggerCheckpoint();
  await until('the checkpoint to be committed', () => first.sink.results().length > 0);
  await client.cancel();
  await client.result.catch(() => {});
  const firstOutput = first.sink.results();
  expect(firstOutput.length).toBeGreaterThan(0);
  expect(firstOutput.length).toBeLessThan(rows);
  return { root, jobId: client.jobId, firstOutput };
}

/** The slot exists and reached its consistent point: changes committed from now on are streamed, not copied. */
async function slotReady(admin: import('pg').Client, slot: string): Promise<boolean> {
  return (await confirmedLsn(admin, slot)) !== null;
}

describe('PostgresCdcSource', () => {
  it('emits the snapshot, then inserts, updates and deletes as typed records with table, LSN and commit time', async () => {
    const { schema, id, slot, admin } = await setup();
    await admin.query(`INSERT INTO ${schema}.t VALUES (1, 1), (2, 2), (3, 3)`);
    const seen: ChangeRecord[] = [];
    const { env, sink } = job({ schema, id, seen });
    const client = await env.executeAsync('cdc-basic');
    await until('the slot to be ready', () => slotReady(admin, slot));
    await admin.query(`INSERT INTO ${schema}.t VALUES (4, 4)`);
    await admin.query('BEGIN');
    await admin.query(`UPDATE ${schema}.t SET v = 10 WHERE id = 1`);
    await admin.query(`DELETE FROM ${schema}.t WHERE id = 2`);
    await admin.query('COMMIT');
    await admin.query(`INSERT INTO ${schema}.t VALUES (${END_ID}, 0)`);
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(sink.results()).toEqual(['S 1 v=1', 'S 2 v=2', 'S 3 v=3', 'I 4 v=4', 'U 1 v=1->10', 'D 2 v=2', `I ${END_ID} v=0`]);
    const [snap, insert, update, del] = [seen[0]!, seen[3]!, seen[4]!, seen[5]!];
    expect(snap).toMatchObject({ kind: 'insert', schema, table: 't', snapshot: true, commitTimeMs: null, before: null });
    expect(insert).toMatchObject({ kind: 'insert', schema, table: 't', snapshot: false, before: null, after: { id: 4, v: 4 } });
    expect(update).toMatchObject({ kind: 'update', before: { id: 1, v: 1 }, after: { id: 1, v: 10 } });
    expect(del).toMatchObject({ kind: 'delete', before: { id: 2, v: 2 }, after: null });
    // one transaction, one commit LSN; LSNs grow with commit order; the snapshot's LSN precedes them
    expect(update.lsn).toBe(del.lsn);
    expect(parseLsn(insert.lsn)).toBeLessThan(parseLsn(update.lsn));
    expect(parseLsn(snap.lsn)).toBeLessThan(parseLsn(insert.lsn));
    expect(Math.abs(update.commitTimeMs! - Date.now())).toBeLessThan(600_000);
  });

  it('restores from checkpoints through task failures, with checkpoints inside transactions: every change exactly once', async () => {
    const { schema, id, slot, admin } = await setup();
    const initial = 200;
    await admin.query(`INSERT INTO ${schema}.t SELECT g, g FROM generate_series(1, ${initial}) g`);
    const failures: number[] = [];
    let processed = 0;
    const fail = (n: number): void => {
      processed = n;
      // two failures in the stream, each after at least one checkpoint of the attempt completed
      if ((n === 700 && failures.length === 0) || (n === 1000 && failures.length === 1)) {
        failures.push(n);
        throw new InjectedFault('process');
      }
    };
    const { env, sink } = job({ schema, id, restarts: 3, intervalMs: 20, fail });
    // few records per step, so checkpoints fall between the changes of one transaction
    const client = await env.executeAsync('cdc-restore', { sourceBatchRecords: 7, elementsPerStep: 2 });
    await until('the slot to be ready', () => slotReady(admin, slot));
    // A checkpoint past the copy, so every restore below is one of the stream: a restore inside
    // the copy continues it from a newer snapshot, where changes to rows not copied yet arrive as
    // their current rows (tested apart), and this test counts individual changes.
    await until('the copy to be emitted', () => processed >= initial);
    await client.triggerCheckpoint();
    const expected: string[] = [];
    for (let i = 1; i <= initial; i++) expected.push(`S ${i} v=${i}`);
    // big transactions (300 changes: 100 inserts, 100 updates of them, 100 deletes of older rows)
    // streamed a few records per step, so checkpoints fall inside them
    for (let tx = 0; tx < 6; tx++) {
      const base = 1000 + tx * 100;
      await admin.query('BEGIN');
      const ins = await admin.query<{ id: number }>(`INSERT INTO ${schema}.t SELECT g, 0 FROM generate_series(${base}, ${base + 99}) g RETURNING id`);
      for (const r of ins.rows) expected.push(`I ${r.id} v=0`);
      const upd = await admin.query<{ id: number }>(`UPDATE ${schema}.t SET v = 1 WHERE id BETWEEN ${base} AND ${base + 99} RETURNING id`);
      for (const r of upd.rows) expected.push(`U ${r.id} v=0->1`);
      const del = await admin.query<{ id: number; v: number }>(
        `DELETE FROM ${schema}.t WHERE id IN (SELECT id FROM ${schema}.t ORDER BY id LIMIT 100) RETURNING id, v`,
      );
      for (const r of del.rows) expected.push(`D ${r.id} v=${r.v}`);
      await admin.query('COMMIT');
    }
    await admin.query(`INSERT INTO ${schema}.t VALUES (${END_ID}, 0)`);
    expected.push(`I ${END_ID} v=0`);
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(failures).toEqual([700, 1000]);
    expect(result.restarts).toBe(2);
    // each once (the order inside one statement is the server's)
    expect(sink.results().length).toBe(expected.length);
    expect([...sink.results()].sort()).toEqual([...expected].sort());
  });

  it('continues a copy restored from a checkpoint inside it: changes of rows copied before are emitted, of rows copied after are not, each row once', async () => {
    const { schema, id, admin } = await setup();
    const rows = 20_000;
    const { root, jobId, firstOutput } = await checkpointInsideCopy(admin, schema, id, rows);
    const copiedFirst = firstOutput.length;
    // after the slot's snapshot and before the restore: rows copied already, and rows still to copy
    await admin.query(`UPDATE ${schema}.t SET v = -v WHERE id IN (10, 20, ${rows - 10})`);
    await admin.query(`DELETE FROM ${schema}.t WHERE id IN (30, ${rows - 20})`);
    await admin.query(`INSERT INTO ${schema}.t VALUES (${rows + 1}, 7)`);
    await admin.query('BEGIN');
    await admin.query(`UPDATE ${schema}.t SET v = 99 WHERE id IN (40, ${rows - 30})`);
    await admin.query('COMMIT');
    const seenSecond: ChangeRecord[] = [];
    const second = job({ schema, id, root, seen: seenSecond });
    const resumed = second.env.execute('second', { restoreFrom: join(root, 'chk', jobId) });
    // the resumed copy emits rows, so its snapshot was taken: this change comes after it
    await until('the resumed copy to emit', () => seenSecond.length > 0);
    await admin.query(`UPDATE ${schema}.t SET v = 5 WHERE id = ${rows - 10}`);
    await admin.query(`INSERT INTO ${schema}.t VALUES (${END_ID}, 0)`);
    expect((await resumed).status).toBe('FINISHED');
    // the second sink re-committed what the checkpoint holds: its output is the whole output
    expect(second.sink.results().slice(0, copiedFirst)).toEqual(firstOutput);
    expect(seenSecond[0]).toMatchObject({ snapshot: true, after: { id: copiedFirst + 1 } });
    // replaying every emitted change over an empty table gives the table: nothing lost, nothing twice
    expect(replayed(second.sink.results())).toEqual(await tableOf(admin, schema));
    // the copied-before rows' changes came as changes; the later rows' ones inside the resumed copy
    const changes = second.sink.results().filter((l) => !l.startsWith('S '));
    expect(changes).toEqual(['U 10 v=10->-10', 'U 20 v=20->-20', 'D 30 v=30', 'U 40 v=40->99', `U ${rows - 10} v=${-(rows - 10)}->5`, `I ${END_ID} v=0`]);
  });

  it('kill soak seed 13: restored inside the copy with the end row in the resumed copy, ends only after the changes committed before the resume to rows copied earlier', async () => {
    const { schema, id, admin } = await setup();
    const rows = 20_000;
    const endRow = rows + 1_000; // the largest key, as the kill job's end row: the resumed copy reads it
    // the guarded case: the checkpoint restored below lies inside the copy (checked there)
    const { root, jobId } = await checkpointInsideCopy(admin, schema, id, rows);
    // committed after the slot's snapshot and before the resume, to rows the first run copied
    await admin.query(`UPDATE ${schema}.t SET v = -v WHERE id IN (10, 20)`);
    await admin.query(`DELETE FROM ${schema}.t WHERE id = 30`);
    // and the end row, before the resume: it is read by the resumed copy, not streamed
    await admin.query(`INSERT INTO ${schema}.t VALUES (${endRow}, 0)`);
    const second = job({ schema, id, root, endId: endRow });
    const result = await second.env.execute('second', { restoreFrom: join(root, 'chk', jobId) });
    expect(result.status).toBe('FINISHED');
    const out = second.sink.results();
    // the end row came from the resumed copy, and the replayed changes followed it
    expect(out).toContain(`S ${endRow} v=0`);
    expect(out.filter((l) => !l.startsWith('S '))).toEqual(['U 10 v=10->-10', 'U 20 v=20->-20', 'D 30 v=30']);
    expect(out.indexOf('U 10 v=10->-10')).toBeGreaterThan(out.indexOf(`S ${endRow} v=0`));
    expect(replayed(out)).toEqual(await tableOf(admin, schema));
  });

  it("advances the slot's confirmed position only when a checkpoint completes, to the position of that checkpoint", async () => {
    const { schema, id, slot, admin } = await setup();
    const seen: ChangeRecord[] = [];
    const { env } = job({ schema, id, seen });
    const client = await env.executeAsync('cdc-confirm');
    await whenRunning(client);
    await until('the slot to be ready', () => slotReady(admin, slot));
    const created = (await confirmedLsn(admin, slot))!;
    for (let i = 1; i <= 50; i++) await admin.query(`INSERT INTO ${schema}.t VALUES ($1, $1)`, [i]);
    await until('50 changes to pass the source', () => seen.length === 50);
    // received and emitted, but no checkpoint: the slot keeps every change
    expect(await confirmedLsn(admin, slot)).toBe(created);
    await client.triggerCheckpoint();
    const lastCommit = parseLsn(seen[49]!.lsn);
    await until('the slot to confirm the checkpoint', async () => (await confirmedLsn(admin, slot))! > lastCommit);
    const afterFirst = (await confirmedLsn(admin, slot))!;
    // the end of the last transaction emitted, nothing beyond: more changes do not move it
    for (let i = 51; i <= 60; i++) await admin.query(`INSERT INTO ${schema}.t VALUES ($1, $1)`, [i]);
    await until('60 changes to pass the source', () => seen.length === 60);
    expect(await confirmedLsn(admin, slot)).toBe(afterFirst);
    expect(afterFirst).toBeLessThan(parseLsn(seen[50]!.lsn));
    await client.triggerCheckpoint();
    await until('the slot to confirm the second checkpoint', async () => (await confirmedLsn(admin, slot))! > parseLsn(seen[59]!.lsn));
    await admin.query(`INSERT INTO ${schema}.t VALUES (${END_ID}, 0)`);
    expect((await client.result).status).toBe('FINISHED');
  });

  it('restoring a checkpoint older than the one the slot confirmed fails once, without the 30 restarts it allows, naming the way out', async () => {
    const { schema, id, slot, admin } = await setup();
    const root = tempDir('weir-cdc-');
    const seen: ChangeRecord[] = [];
    const first = job({ schema, id, seen, root, retained: 2 });
    const client = await first.env.executeAsync('first');
    await until('the slot to be ready', () => slotReady(admin, slot));
    await admin.query(`INSERT INTO ${schema}.t VALUES (1, 1)`);
    await until('the change to pass', () => seen.length === 1);
    const older = await client.triggerCheckpoint();
    await admin.query(`INSERT INTO ${schema}.t VALUES (2, 2)`);
    await until('the second change to pass', () => seen.length === 2);
    await client.triggerCheckpoint();
    // the newer checkpoint completed and the slot confirmed it: the change between is gone from the slot
    await until('the slot to confirm the newer checkpoint', async () => (await confirmedLsn(admin, slot))! > parseLsn(seen[1]!.lsn));
    await client.cancel();
    await client.result.catch(() => {});
    const again = job({ schema, id, root, restarts: 30 });
    let restarts = 0;
    const err = await again.env
      .execute('again', { restoreFrom: older.location, onEvent: (e) => void (e.type === 'restarting' && restarts++) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(restarts).toBe(0);
    expect(isRetryable(err)).toBe(false);
    const message = (err as Error).message;
    expect(message).toContain('a restart would fail the same way');
    expect(message).toContain(`slot ${slot} confirmed`);
    expect(message).toContain('--accept-duplicates does not help');
    expect(message).toContain('start the job without --from');
  });

  it("survives the server ending the slot's connection mid-run: the job fails over and every change arrives once", async () => {
    const { schema, id, slot, admin } = await setup();
    const seen: ChangeRecord[] = [];
    const { env, sink } = job({ schema, id, seen, restarts: 3, intervalMs: 30 });
    const client = await env.executeAsync('cdc-dropped');
    await until('the slot to be ready', () => slotReady(admin, slot));
    const expected: string[] = [];
    const insert = async (from: number, to: number): Promise<void> => {
      for (let i = from; i <= to; i++) {
        await admin.query(`INSERT INTO ${schema}.t VALUES ($1, $1)`, [i]);
        expected.push(`I ${i} v=${i}`);
      }
    };
    await insert(1, 100);
    await until('100 changes to pass the source', () => seen.length >= 100);
    // as a server restart would: the walsender streaming the slot goes
    const ended = await admin.query('SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active', [slot]);
    expect(ended.rowCount).toBe(1);
    await insert(101, 200);
    await admin.query(`INSERT INTO ${schema}.t VALUES (${END_ID}, 0)`);
    expected.push(`I ${END_ID} v=0`);
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBeGreaterThanOrEqual(1);
    expect(sink.results()).toEqual(expected);
  });

  it('restores a checkpoint written before it was a split source (format 1 in operator state postgres-cdc-position), and refuses a format it does not know', async () => {
    const { schema, id, slot, admin } = await setup();
    await admin.query(`CREATE PUBLICATION ${slot} FOR TABLE ${schema}.t`);
    await admin.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
    const created = (await confirmedLsn(admin, slot))!;
    // transaction A: emitted before the old checkpoint; B: after it
    await admin.query(`INSERT INTO ${schema}.t VALUES (1, 1), (2, 2)`);
    const afterA = (await admin.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]!.l;
    await admin.query(`INSERT INTO ${schema}.t VALUES (3, 3), (4, 4)`);
    const v1: CdcStateV1 = {
      v: 1,
      slot,
      publication: slot,
      phase: 'stream',
      consistentLsn: formatLsn(created),
      commitLsn: afterA,
      confirmLsn: afterA,
      partialLsn: '0/0',
      partialCount: 0,
      snapshotRows: 0,
      snapshotTable: 0,
      snapshotKey: null,
      boundaries: [],
    };
    const legacyCheckpoint = async (state: unknown): Promise<string> => {
      const root = tempDir('weir-cdc-');
      const env = StreamEnvironment.create({ parallelism: 1, checkpointStorage: join(root, 'chk'), checkpointing: { retention: 'retain-on-cancel' } });
      env.fromSource(legacySource(state)).uid('cdc').map(show).uid('show').name('show').sinkTo(new CollectSink<string>()).uid('out');
      const client = await env.executeAsync('legacy');
      await whenRunning(client);
      await client.triggerCheckpoint();
      await client.cancel();
      await client.result.catch(() => {});
      return join(root, 'chk', client.jobId);
    };
    const good = await legacyCheckpoint(v1);
    const bad = await legacyCheckpoint({ ...v1, v: 7 });
    await admin.query(`INSERT INTO ${schema}.t VALUES (${END_ID}, 0)`);
    const restored = job({ schema, id });
    const result = await restored.env.execute('restored', { restoreFrom: good });
    expect(result.status).toBe('FINISHED');
    expect(restored.sink.results()).toEqual(['I 3 v=3', 'I 4 v=4', `I ${END_ID} v=0`]);
    const refused = job({ schema, id });
    await expect(refused.env.execute('refused', { restoreFrom: bad })).rejects.toThrow(
      new RegExp(`postgres-cdc ${id}: the checkpointed position \\(format 1\\) has format version 7`),
    );
  });

  it('a server that is down gives one error naming the server and address, without the password', async () => {
    const s = new PostgresCdcSource({ tables: ['t'], connection: { host: '127.0.0.1', port: 1, database: 'test', user: 'root', password: 'sekret-pw' } });
    const reader = s.createReader();
    const ctx = {
      uid: 'cdc',
      subtaskIndex: 0,
      parallelism: 1,
      restored: false,
      clock: new ManualEnvironment(),
      getUnionListState: () => ({ get: () => [], update: () => {}, add: () => {}, clear: () => {} }),
    } as unknown as import('../../../../src/index.ts').RuntimeContext;
    const err = await Promise.resolve(reader.open(ctx)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as ConnectorError).code).toBe('CONNECTOR_UNREACHABLE');
    expect((err as Error).message).toContain('PostgreSQL at 127.0.0.1:1 (database test, user root)');
    expect((err as Error).message).not.toContain('sekret-pw');
    reader.close();
  });

  it('checks its options, naming the one at fault', () => {
    expect(() => new PostgresCdcSource({ tables: [] })).toThrow(/PostgresCdcSource.tables: must list at least one table/);
    expect(() => new PostgresCdcSource({ tables: ['a.b.c'] })).toThrow(/PostgresCdcSource.tables: 'a.b.c' is not a table name/);
    expect(() => new PostgresCdcSource({ tables: ['t', 'public.t'] })).toThrow(/lists a table twice/);
    expect(() => new PostgresCdcSource({ tables: ['t'], bufferChanges: 0 })).toThrow(/PostgresCdcSource.bufferChanges: must be an integer >= 1/);
  });
});
