/**
 * Jobs writing into PostgreSQL through the two-phase sink, with failures injected at chosen
 * moments (checkpoints are triggered explicitly): the table ends up with every row exactly once,
 * prepared transactions a checkpoint names are committed on restore, those of a dead run it does
 * not name are rolled back, none is left behind, and recovery refuses to fall back past a
 * checkpoint the sink committed.
 */
import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InjectedFault, StreamEnvironment } from '../../../src/index.ts';
import { PostgresSink } from '../../../src/connectors/postgres/index.ts';
import type { PostgresSinkOptions } from '../../../src/connectors/postgres/index.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../../../src/runtime/faults.ts';
import { checkpointInSteps } from '../../support/clients.ts';
import { SourceGate } from '../../support/held-source.ts';
import { buildKeyedCountJob, expectedRunningCounts, tempDir, until } from '../../support/jobs.ts';
import { CONNECTION, freshSchema, preparedOf, rowsOf } from './pg-support.ts';

const KEYS = 200;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

interface JobSpec {
  readonly root: string;
  readonly schema: string;
  readonly jobId: string;
  readonly count: number;
  /** Holds the input (default: not at all), so the job still runs while the test acts. */
  readonly gate?: SourceGate;
  readonly restarts: number;
  readonly port?: number;
  readonly sink?: Partial<PostgresSinkOptions<string>>;
}

function job(spec: JobSpec) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: join(spec.root, 'chk'),
    checkpointing: { retained: 3, retention: 'retain-on-cancel' },
    restartStrategy: spec.restarts === 0 ? { type: 'none' } : { type: 'fixed-delay', attempts: spec.restarts, delayMs: 5 },
    jobId: spec.jobId,
  });
  const sink = new PostgresSink<string>({
    schema: spec.schema,
    table: 't',
    columns: ['k', 'n'],
    toRow: (s) => [s.slice(0, s.lastIndexOf(':')), Number(s.slice(s.lastIndexOf(':') + 1))],
    batchRows: 100,
    connection: spec.port === undefined ? CONNECTION : { ...CONNECTION, port: spec.port },
    ...spec.sink,
  });
  const gate = spec.gate ?? new SourceGate(Infinity);
  buildKeyedCountJob(env, sink, { count: spec.count, keys: KEYS, gate });
  return { env, sink, gate };
}

function expected(count: number): string[] {
  return expectedRunningCounts(count, KEYS);
}

/** One fault at a site of the counting (and sink) vertex, when armed and its condition holds. */
class Fault implements FaultInjector {
  armed = false;
  fired = false;
  constructor(
    private readonly site: FaultSite,
    private readonly when: (ctx: FaultContext) => boolean = () => true,
  ) {}
  check(site: FaultSite, ctx: FaultContext): void {
    if (!this.armed || this.fired || site !== this.site || !ctx.vertex.includes('count') || !this.when(ctx)) return;
    this.fired = true;
    throw new InjectedFault(site);
  }
}

class Faults implements FaultInjector {
  constructor(private readonly all: Fault[]) {}
  check(site: FaultSite, ctx: FaultContext): void {
    for (const f of this.all) f.check(site, ctx);
  }
}

async function setup(ddl?: string) {
  const s = await freshSchema(ddl);
  cleanups.push(s.drop);
  return { ...s, root: tempDir('weir-pg-') };
}

describe('PostgresSink in jobs', () => {
  it('writes every row exactly once through a task failure and a failure between PREPARE and COMMIT, leaving no prepared transaction', async () => {
    const { schema, admin, root } = await setup();
    const count = 30_000;
    const { env, sink, gate } = job({ root, schema, jobId: 'eo', count, restarts: 3, gate: new SourceGate() });
    const crash = new Fault('process', (ctx) => ctx.attempt === 0);
    const commitCrash = new Fault('commit', (ctx) => ctx.attempt === 1 && ctx.subtask === 0);
    const client = await env.executeAsync('eo', { faults: new Faults([crash, commitCrash]) });
    const second = (await checkpointInSteps(client, gate, { count: 2, step: 3_000, subtasks: 2 }))[1]!;
    await until('checkpoint 2 to be committed', async () => (await sink.newestCommitted()) === second.checkpointId);
    crash.armed = true;
    commitCrash.armed = true;
    gate.open();
    const result = await client.result;
    expect(crash.fired).toBe(true);
    expect(commitCrash.fired).toBe(true);
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(2);
    expect(await rowsOf(admin, schema)).toEqual(expected(count));
    expect(await preparedOf(admin, schema)).toEqual([]);
  });

  it.each([
    ['commits on restore the prepared transactions the checkpoint names (a crash between PREPARE and COMMIT)', 'commit' as const],
    ['rolls back on restore the prepared transactions of a dead run that the checkpoint does not name', 'before-ack' as const],
  ])('%s', async (_name, site) => {
    const { schema, admin, root } = await setup();
    const count = 20_000;
    const first = job({ root, schema, jobId: 'first', count, restarts: 0, gate: new SourceGate() });
    // 'commit': checkpoint 2 completes, subtask 0 dies before COMMIT PREPARED; 'before-ack': checkpoint 2 is prepared everywhere but never completes.
    const fault = new Fault(site, (ctx) => ctx.subtask === 0 && ctx.checkpointId === 2);
    fault.armed = true;
    const client = await first.env.executeAsync('first', { faults: fault });
    const [one] = await checkpointInSteps(client, first.gate, { count: 1, step: 3_000, subtasks: 2 });
    expect(one!.checkpointId).toBe(1);
    await until('checkpoint 1 to be committed', async () => (await first.sink.newestCommitted()) === 1);
    first.gate.allowUpTo(6_000);
    await first.gate.reached(2);
    await client.triggerCheckpoint().catch(() => {});
    const firstResult = await client.result.catch((e: unknown) => e);
    expect(fault.fired).toBe(true);
    expect(firstResult).not.toHaveProperty('status', 'FINISHED');
    const left = await preparedOf(admin, schema);
    expect(left.some((gid) => gid.includes(':2:'))).toBe(true);

    const second = job({ root, schema, jobId: 'second', count, restarts: 0 });
    const result = await second.env.execute('second', { restoreFrom: join(root, 'chk', 'first') });
    expect(result.status).toBe('FINISHED');
    expect(await rowsOf(admin, schema)).toEqual(expected(count));
    expect(await preparedOf(admin, schema)).toEqual([]);
  });

  it('refuses to restore a checkpoint older than the newest one it committed, naming the sink and both checkpoints', async () => {
    const { schema, admin, root } = await setup();
    const first = job({ root, schema, jobId: 'first', count: 20_000, restarts: 0, gate: new SourceGate() });
    const client = await first.env.executeAsync('first');
    const newest = (await checkpointInSteps(client, first.gate, { count: 2, step: 2_000, subtasks: 2 }))[1]!;
    await until('the newest checkpoint to be committed', async () => (await first.sink.newestCommitted()) === newest.checkpointId);
    await client.cancel();
    truncateSync(join(newest.location, '_metadata'), 20);
    const rowsBefore = await rowsOf(admin, schema);

    const second = job({ root, schema, jobId: 'second', count: 20_000, restarts: 0 });
    const error = await second.env.execute('second', { restoreFrom: join(root, 'chk', 'first') }).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain(`sink 'postgres-sink ${schema}.t' (uid 'out') has committed checkpoint ${newest.checkpointId}`);
    expect(message).toContain(`restore checkpoint ${newest.checkpointId - 1}`);
    expect(message).toContain('--accept-duplicates');
    expect(await rowsOf(admin, schema)).toEqual(rowsBefore);
    expect(await preparedOf(admin, schema)).toEqual([]);
  });

  it("survives the server dropping the sink's connections mid-run: the job fails over and every row is written once", async () => {
    const { schema, admin, root } = await setup();
    const count = 20_000;
    const { env, sink, gate } = job({ root, schema, jobId: 'dropped', count, restarts: 3, gate: new SourceGate() });
    const client = await env.executeAsync('dropped');
    const [first] = await checkpointInSteps(client, gate, { count: 1, step: 3_000, subtasks: 2 });
    await until('checkpoint 1 to be committed', async () => (await sink.newestCommitted()) === first!.checkpointId);
    gate.allowUpTo(5_000);
    await gate.reached(2);
    // as a server restart would: every connection of the sink goes, with the open transactions
    const dropped = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE $1', [`weir sink ${schema}.t %`]);
    expect(dropped.rowCount).toBe(4);
    gate.open();
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBeGreaterThanOrEqual(1);
    expect(await rowsOf(admin, schema)).toEqual(expected(count));
    expect(await preparedOf(admin, schema)).toEqual([]);
  });

  it.each([
    ['upsert mode, exactly-once: one row per key with its final count', { upsertKey: ['k'] }],
    ['upsert mode, at-least-once: one row per key with its final count', { upsertKey: ['k'], guarantee: 'at-least-once' as const }],
  ])('through a task failure, %s', async (_name, options) => {
    const { schema, admin, root } = await setup('k text PRIMARY KEY, n integer NOT NULL');
    const count = 20_000;
    const { env, gate } = job({ root, schema, jobId: 'upsert', count, restarts: 2, gate: new SourceGate(), sink: options });
    const crash = new Fault('process', (ctx) => ctx.attempt === 0);
    const client = await env.executeAsync('upsert', { faults: crash });
    await checkpointInSteps(client, gate, { count: 1, step: 3_000, subtasks: 2 });
    crash.armed = true;
    gate.open();
    const result = await client.result;
    expect(crash.fired).toBe(true);
    expect(result.restarts).toBe(1);
    const finalCounts = new Map<string, number>();
    for (const row of expected(count)) {
      const k = row.slice(0, row.lastIndexOf(':'));
      finalCounts.set(k, Math.max(finalCounts.get(k) ?? 0, Number(row.slice(row.lastIndexOf(':') + 1))));
    }
    expect(await rowsOf(admin, schema)).toEqual([...finalCounts].map(([k, n]) => `${k}:${n}`).sort());
    expect(await preparedOf(admin, schema)).toEqual([]);
  });

  it('at-least-once mode writes every row at least once through a task failure, and repeats some', async () => {
    const { schema, admin, root } = await setup();
    const count = 20_000;
    const { env, gate } = job({ root, schema, jobId: 'alo', count, restarts: 2, gate: new SourceGate(), sink: { guarantee: 'at-least-once' } });
    // the crash comes after records past checkpoint 1 were flushed (a full batch), so they come again
    const crash = new Fault('process', (ctx) => ctx.attempt === 0);
    const client = await env.executeAsync('alo', { faults: crash });
    await checkpointInSteps(client, gate, { count: 1, step: 3_000, subtasks: 2 });
    gate.allowUpTo(4_000);
    await gate.reached(2);
    await until('rows after checkpoint 1 to be written', async () => (await rowsOf(admin, schema)).length >= 6_000 + 1_000);
    crash.armed = true;
    gate.open();
    const result = await client.result;
    expect(result.restarts).toBe(1);
    const rows = await rowsOf(admin, schema);
    expect([...new Set(rows)].sort()).toEqual(expected(count));
    expect(rows.length).toBeGreaterThan(count);
    expect(await preparedOf(admin, schema)).toEqual([]);
  });

  it('a server that is down at start fails the job with one error naming the server and address', async () => {
    const { schema, root } = await setup();
    const { env } = job({ root, schema, jobId: 'down', count: 100, restarts: 0, port: 1 });
    const error = await env.execute('down').catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message).toContain('PostgreSQL at 127.0.0.1:1 (database test, user root)');
    expect(message.split('PostgreSQL at').length).toBe(2);
  });
});
