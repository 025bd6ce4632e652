/**
 * The PostgreSQL sink's writer against the real server: prepare on pre-commit, idempotent commit,
 * clean-up of a dead run's prepared transactions, upserts, at-least-once, an unreachable server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorError } from '../../../src/index.ts';
import { PostgresSink } from '../../../src/connectors/postgres/index.ts';
import type { PostgresSinkOptions } from '../../../src/connectors/postgres/index.ts';
import { formatGid } from '../../../src/connectors/postgres/sql.ts';
import { until } from '../../support/jobs.ts';
import { CONNECTION, client, freshSchema, preparedOf, rowsOf, writerContext } from './pg-support.ts';

type Row = { k: string; n: number };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(ddl?: string) {
  const s = await freshSchema(ddl);
  cleanups.push(s.drop);
  const sink = (extra: Partial<PostgresSinkOptions<Row>> = {}) =>
    new PostgresSink<Row>({ schema: s.schema, table: 't', columns: ['k', 'n'], connection: CONNECTION, batchRows: 3, ...extra });
  return { ...s, sink };
}

function writeAll(writer: { write(r: Row): void }, rows: Row[]): void {
  for (const r of rows) writer.write(r);
}

describe('PostgresSink writer', () => {
  it('prepares on pre-commit, shows nothing before the commit, and commits idempotently', async () => {
    const { schema, admin, sink } = await setup();
    const s = sink();
    const w = s.createWriter();
    await w.open(writerContext(0, 'run1-a0'), []);
    writeAll(w, [
      { k: 'a', n: 1 },
      { k: 'b', n: 2 },
      { k: 'c', n: 3 },
      { k: 'd', n: 4 },
    ]);
    const gid = w.preCommit(7);
    expect(gid).toBe(`weir:${schema}.t:0:7:run1-a0`);
    await w.whenPreCommitted!(7);
    expect(await preparedOf(admin, schema)).toEqual([gid]);
    expect(await rowsOf(admin, schema)).toEqual([]);
    expect(await s.newestCommitted()).toBe(null);
    await w.commit([gid!]);
    await w.commit([gid!]); // again: the gid is gone, the bookkeeping row says it committed
    expect(await rowsOf(admin, schema)).toEqual(['a:1', 'b:2', 'c:3', 'd:4']);
    expect(await preparedOf(admin, schema)).toEqual([]);
    expect(await s.newestCommitted()).toBe(7);
    expect(w.preCommit(8)).toBe(null); // nothing written since
    w.close!();
  });

  it('a new run rolls back prepared transactions of a dead run that no restored committable names, and commits the named ones', async () => {
    const { schema, admin, sink } = await setup();
    const dead = sink().createWriter();
    await dead.open(writerContext(0, 'dead-a0'), []);
    writeAll(dead, [{ k: 'x', n: 1 }]);
    const first = dead.preCommit(1)!;
    writeAll(dead, [{ k: 'y', n: 2 }]);
    const second = dead.preCommit(2)!;
    await dead.whenPreCommitted!(2);
    writeAll(dead, [{ k: 'z', n: 3 }]); // an open transaction: gone with the connection
    dead.dispose!();
    expect(await preparedOf(admin, schema)).toEqual([first, second]);

    const s = sink();
    const next = s.createWriter();
    await next.open(writerContext(0, 'next-a0'), [first]);
    expect(await preparedOf(admin, schema)).toEqual([first]);
    await next.commit([first]);
    expect(await rowsOf(admin, schema)).toEqual(['x:1']);
    expect(await preparedOf(admin, schema)).toEqual([]);
    expect(await s.newestCommitted()).toBe(1);
    next.close!();
  });

  it('recovery waits for a prepared transaction that a dead run\'s session still holds ("is busy") instead of failing', async () => {
    const { schema, admin, sink } = await setup();
    const gid = formatGid(`${schema}.t`, 0, 1, 'dead-a0');
    // A session stays inside PREPARE TRANSACTION, holding the transaction, while it waits for a
    // synchronous standby that does not exist: as a killed run's session does until the server
    // finished its PREPARE. Every other session commits locally meanwhile (the server default).
    await admin.query("ALTER SYSTEM SET synchronous_commit = 'local'");
    await admin.query("ALTER SYSTEM SET synchronous_standby_names = 'weir_test_no_such_standby'");
    await admin.query('SELECT pg_reload_conf()');
    const dead = await client();
    try {
      await dead.query('SET synchronous_commit = on');
      const deadPid = (await dead.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await dead.query('BEGIN');
      await dead.query(`INSERT INTO ${schema}.t VALUES ('x', 1)`);
      let prepared = false;
      const preparing = dead.query(`PREPARE TRANSACTION '${gid}'`).then(() => {
        prepared = true;
      });
      const waitEvent = async (pid: number): Promise<string | null> =>
        (await admin.query<{ w: string | null }>('SELECT wait_event AS w FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]?.w ?? null;
      await until('the PREPARE to wait for the standby', async () => {
        if (prepared) throw new Error('the server finished the PREPARE at once: the standby setting did not apply');
        return (await waitEvent(deadPid)) === 'SyncRep';
      });
      const w = sink().createWriter();
      await w.open(writerContext(0, 'next-a0'), [gid]);
      let failure: unknown = null;
      const committing = w.commit([gid]).catch((err: unknown) => {
        failure = err;
      });
      // the guarded case: the writer's COMMIT PREPARED was refused as busy and it waits on the server
      await until('the writer to wait for the busy transaction', async () => {
        if (failure !== null) throw failure;
        const res = await admin.query("SELECT 1 FROM pg_stat_activity WHERE application_name LIKE 'weir sink%' AND query LIKE 'SELECT pg_sleep%'");
        return res.rowCount! > 0;
      });
      await admin.query('SELECT pg_cancel_backend($1)', [deadPid]); // the PREPARE finishes and lets go
      await preparing;
      await committing;
      expect(failure).toBe(null);
      expect(await rowsOf(admin, schema)).toEqual(['x:1']);
      expect(await preparedOf(admin, schema)).toEqual([]);
      w.close!();
    } finally {
      await admin.query('ALTER SYSTEM RESET synchronous_standby_names');
      await admin.query('ALTER SYSTEM RESET synchronous_commit');
      await admin.query('SELECT pg_reload_conf()');
      await dead.end();
    }
  });

  it("subtask 0 committing its share of the restored transactions leaves the other subtasks' share for them", async () => {
    const { schema, admin, sink } = await setup();
    const s = sink();
    const dead = [s.createWriter(), s.createWriter()];
    const gids: string[] = [];
    for (const [i, w] of dead.entries()) {
      await w.open(writerContext(i, 'dead-a0'), []);
      writeAll(w, [{ k: `s${i}`, n: 1 }]);
      gids.push(w.preCommit(3)!);
      await w.whenPreCommitted!(3);
      w.dispose!();
    }
    const next = [s.createWriter(), s.createWriter()];
    for (const [i, w] of next.entries()) await w.open(writerContext(i, 'next-a0'), gids);
    await next[0]!.commit([gids[0]!]);
    expect(await preparedOf(admin, schema)).toEqual([gids[1]]);
    await next[1]!.commit([gids[1]!]);
    expect(await rowsOf(admin, schema)).toEqual(['s0:1', 's1:1']);
    for (const w of next) w.close!();
  });

  it('a PREPARE of a dying attempt that the server finishes after the new attempt opened is rolled back at the next commit', async () => {
    const { schema, admin, sink } = await setup();
    const s = sink();
    const next = s.createWriter();
    await next.open(writerContext(0, 'next-a1'), []);
    const dying = s.createWriter();
    await dying.open(writerContext(1, 'next-a0'), []);
    writeAll(dying, [{ k: 'late', n: 1 }]);
    const late = dying.preCommit(4)!;
    await dying.whenPreCommitted!(4);
    dying.dispose!();
    writeAll(next, [{ k: 'a', n: 1 }]);
    const mine = next.preCommit(5)!;
    await next.whenPreCommitted!(5);
    expect(await preparedOf(admin, schema)).toEqual([late, mine].sort());
    await next.commit([mine]);
    expect(await preparedOf(admin, schema)).toEqual([]);
    expect(await rowsOf(admin, schema)).toEqual(['a:1']);
    next.close!();
  });

  it('committing a prepared transaction that was rolled back is an error saying the rows are lost', async () => {
    const { schema, admin, sink } = await setup();
    const w = sink().createWriter();
    await w.open(writerContext(0, 'run-a0'), []);
    writeAll(w, [{ k: 'a', n: 1 }]);
    const gid = w.preCommit(3)!;
    await w.whenPreCommitted!(3);
    await admin.query(`ROLLBACK PREPARED '${gid}'`);
    const err = await w.commit([gid]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as Error).message).toContain(gid);
    expect((err as Error).message).toContain('never committed');
    expect(await rowsOf(admin, schema)).toEqual([]);
    w.close!();
  });

  it('upsert mode keeps the last row per key, within a batch and across checkpoints', async () => {
    const { admin, schema, sink } = await setup('k text PRIMARY KEY, n integer NOT NULL');
    const w = sink({ upsertKey: ['k'] }).createWriter();
    await w.open(writerContext(0, 'run-a0'), []);
    writeAll(w, [
      { k: 'a', n: 1 },
      { k: 'a', n: 2 },
      { k: 'b', n: 1 },
      { k: 'a', n: 3 },
    ]);
    const g1 = w.preCommit(1)!;
    await w.whenPreCommitted!(1);
    await w.commit([g1]);
    writeAll(w, [
      { k: 'b', n: 5 },
      { k: 'c', n: 1 },
    ]);
    const g2 = w.preCommit(2)!;
    await w.whenPreCommitted!(2);
    await w.commit([g2]);
    expect(await rowsOf(admin, schema)).toEqual(['a:3', 'b:5', 'c:1']);
    w.close!();
  });

  it('at-least-once mode writes without prepared transactions and has flushed everything when the pre-commit is durable', async () => {
    const { admin, schema, sink } = await setup();
    const s = sink({ guarantee: 'at-least-once' });
    const w = s.createWriter();
    await w.open(writerContext(0, 'run-a0'), []);
    writeAll(w, [
      { k: 'a', n: 1 },
      { k: 'b', n: 2 },
      { k: 'c', n: 3 },
      { k: 'd', n: 4 },
      { k: 'e', n: 5 },
    ]);
    expect(w.preCommit(1)).toBe(null);
    await w.whenPreCommitted!(1);
    expect(await rowsOf(admin, schema)).toEqual(['a:1', 'b:2', 'c:3', 'd:4', 'e:5']);
    expect(await preparedOf(admin, schema)).toEqual([]);
    expect(await s.newestCommitted()).toBe(null);
    w.close!();
  });

  it('a server that is down gives one error naming the server and address, without the password', async () => {
    const s = new PostgresSink<Row>({
      table: 't',
      columns: ['k', 'n'],
      connection: { host: '127.0.0.1', port: 1, database: 'test', user: 'root', password: 'sekret-pw' },
    });
    const err = await s.newestCommitted().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as ConnectorError).code).toBe('CONNECTOR_UNREACHABLE');
    expect((err as Error).message).toContain('PostgreSQL at 127.0.0.1:1 (database test, user root)');
    expect((err as Error).message).not.toContain('sekret-pw');
    expect(JSON.stringify(err)).not.toContain('sekret-pw');
    const w = s.createWriter();
    const openErr = await Promise.resolve(w.open(writerContext(0, 'run-a0'), [])).catch((e: unknown) => e);
    expect((openErr as ConnectorError).code).toBe('CONNECTOR_UNREACHABLE');
  });

  it('deleteWhen deletes the row of the key instead, the last action per key counting, within a batch and across checkpoints', async () => {
    const { admin, schema, sink } = await setup('k text PRIMARY KEY, n integer NOT NULL');
    const w = sink({ upsertKey: ['k'], deleteWhen: (r) => r.n === 0, batchRows: 4 }).createWriter();
    await w.open(writerContext(0, 'run-a0'), []);
    writeAll(w, [
      { k: 'a', n: 1 },
      { k: 'b', n: 1 },
      { k: 'c', n: 1 },
      { k: 'b', n: 0 }, // a full batch: b is deleted before it was ever there
      { k: 'd', n: 0 },
      { k: 'd', n: 2 }, // deleted, then written again: written
    ]);
    const g1 = w.preCommit(1)!;
    await w.whenPreCommitted!(1);
    await w.commit([g1]);
    expect(await rowsOf(admin, schema)).toEqual(['a:1', 'c:1', 'd:2']);
    writeAll(w, [
      { k: 'a', n: 0 },
      { k: 'c', n: 0 },
      { k: 'c', n: 4 },
      { k: 'd', n: 0 },
    ]);
    const g2 = w.preCommit(2)!;
    await w.whenPreCommitted!(2);
    await w.commit([g2]);
    expect(await rowsOf(admin, schema)).toEqual(['c:4']);
    w.close!();
  });

  it('checks its options, naming the one at fault', () => {
    expect(() => new PostgresSink({ table: 't', columns: ['k'], upsertKey: ['id'] })).toThrow(/PostgresSink.upsertKey: column 'id'/);
    expect(() => new PostgresSink<{ k: string }>({ table: 't', columns: ['k'], deleteWhen: () => true })).toThrow(/PostgresSink.deleteWhen: needs upsertKey/);
    expect(() => new PostgresSink({ table: 't', columns: [] })).toThrow(/PostgresSink.columns/);
    expect(() => new PostgresSink({ table: 't', columns: ['k'], batchRows: 70_000 })).toThrow(/PostgresSink.batchRows: must be an integer from 1 to 65535/);
  });
});
