/**
 * JetStream in -> keyed count -> JetStream out, against the real server: exactly-once output under
 * injected failures, rescale through a savepoint, a server killed and restarted mid-run (a private
 * server, so the shared one keeps serving others), a server down at start, and credentials kept
 * out of errors and checkpoints.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError } from '../../../src/index.ts';
import type { FaultSite } from '../../../src/runtime/faults.ts';
import { whenRunning } from '../../support/clients.ts';
import { FaultPlan, type PlannedFault } from '../../support/fault-plan.ts';
import { tempDir, until } from '../../support/jobs.ts';
import { freePort, PrivateServer } from '../../support/servers.ts';
import { createStreams, deleteStreams, finish, natsClient, natsJob, oracle, publishInput, streamContents, streamCount, uniqueNames } from './nats-support.ts';

const PER_SPLIT = 1_000;
const KEYS = 30;

let shared: NatsConnection;
beforeAll(async () => {
  shared = await natsClient();
});
afterAll(async () => {
  await shared.close();
});

const f = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

function errorChain(err: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = err; e instanceof Error; e = e.cause) chain.push(e);
  return chain;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('JetStream -> keyed count -> JetStream (exactly-once)', () => {
  it.each([
    ['no fault', null],
    ['source poll', f('process', 'nats-in', 3, 1)],
    ['source sync phase', f('sync-phase', 'nats-in', 2, 0)],
    ['keyed count', f('process', 'count', 3, 1)],
    ['sink commit', f('commit', 'count', 1, 0)],
  ] as const)('%s: every output message exactly once', async (_name, fault) => {
    const names = uniqueNames('eo');
    await createStreams(shared, names);
    try {
      await publishInput(shared, names, 3, 0, PER_SPLIT, KEYS);
      const plan = new FaultPlan(fault ? [fault] : []);
      const { env } = natsJob({ names, splits: 3, parallelism: 2, options: { checkpointStorage: tempDir() } });
      const job = await env.executeAsync('nats-eo', { faults: plan });
      await finish(job, shared, names.outStream, 3 * PER_SPLIT);
      expect(plan.fired.length).toBe(fault ? 1 : 0);
      expect((await job.result).restarts).toBe(fault ? 1 : 0);
      expect(await streamContents(shared, names.outStream)).toEqual(oracle(3, PER_SPLIT, KEYS));
    } finally {
      await deleteStreams(shared, names);
    }
  });

  it('discovers the input subjects at open: each read once, exactly-once through a failure', async () => {
    const names = uniqueNames('discover');
    await createStreams(shared, names);
    try {
      await publishInput(shared, names, 5, 0, 400, KEYS);
      const plan = new FaultPlan([f('process', 'count', 1, 0)]);
      const { env } = natsJob({ names, splits: 5, parallelism: 2, discover: true, options: { checkpointStorage: tempDir() } });
      const job = await env.executeAsync('nats-discover', { faults: plan });
      await finish(job, shared, names.outStream, 2_000);
      expect(plan.fired.length).toBe(1);
      expect(await streamContents(shared, names.outStream)).toEqual(oracle(5, 400, KEYS));
    } finally {
      await deleteStreams(shared, names);
    }
  });

  it('rescales the source 2 -> 3 through a savepoint: messages before and after it, each once', async () => {
    const names = uniqueNames('rescale');
    await createStreams(shared, names);
    const root = tempDir();
    try {
      await publishInput(shared, names, 4, 0, 400, KEYS);
      const first = await natsJob({ names, splits: 4, parallelism: 2, options: { checkpointStorage: join(root, 'chk') } }).env.executeAsync('rescale');
      await until('the first 1,600 messages out', async () => (await streamCount(shared, names.outStream)) >= 1_600);
      const savepoint = await first.stopWithSavepoint(join(root, 'sp'));
      await first.result;
      await publishInput(shared, names, 4, 400, 800, KEYS);
      const second = await natsJob({ names, splits: 4, parallelism: 3, options: { checkpointStorage: join(root, 'chk') } }).env.executeAsync('rescale', {
        restoreFrom: savepoint,
      });
      await finish(second, shared, names.outStream, 3_200);
      expect(await streamContents(shared, names.outStream)).toEqual(oracle(4, 800, KEYS));
    } finally {
      await deleteStreams(shared, names);
    }
  });
});

describe('JetStream failures', () => {
  it('a server down at start fails the job with one error naming the server and address', async () => {
    const port = await freePort();
    const names = uniqueNames('down');
    const { env } = natsJob({
      names,
      splits: 1,
      parallelism: 1,
      connection: { servers: `nats://app:sekret-down@127.0.0.1:${port}`, connectTimeoutMs: 2_000 },
      options: { restartStrategy: { type: 'none' } },
    });
    const error = await env.execute('down').catch((e: unknown) => e);
    const connector = errorChain(error).find((e) => e instanceof ConnectorError) as ConnectorError | undefined;
    expect(connector?.code).toBe('CONNECTOR_UNREACHABLE');
    expect(connector?.system).toBe(`NATS at 127.0.0.1:${port} (user app)`);
    const text = errorChain(error)
      .map((e) => `${e.message} ${JSON.stringify(e)}`)
      .join('\n');
    expect(text).not.toContain('sekret-down');
  });

  it('a server restart mid-run: the job fails over and recovers without loss or duplicates', async () => {
    const server = await PrivateServer.nats();
    let nc = await natsClient(server.port);
    const names = uniqueNames('restart');
    try {
      await createStreams(nc, names);
      await publishInput(nc, names, 3, 0, PER_SPLIT, KEYS);
      const connection = { servers: `nats://127.0.0.1:${server.port}`, connectTimeoutMs: 2_000 };
      const job = await natsJob({ names, splits: 3, parallelism: 2, connection, options: { checkpointStorage: tempDir() } }).env.executeAsync('restart');
      await whenRunning(job);
      await until('some output', async () => (await streamCount(nc, names.outStream)) > 0);
      await nc.close();
      await server.restart();
      nc = await natsClient(server.port);
      await finish(job, nc, names.outStream, 3 * PER_SPLIT);
      expect((await job.result).restarts).toBeGreaterThanOrEqual(1);
      expect(await streamContents(nc, names.outStream)).toEqual(oracle(3, PER_SPLIT, KEYS));
    } finally {
      await nc.close().catch(() => {});
      await server.kill();
    }
  });

  it('user and password reach the server but never an error or a checkpoint', async () => {
    const secret = 'sekret-4b1d07';
    const server = await PrivateServer.nats(['--user', 'app', '--pass', secret]);
    const nc = await natsClient(server.port, { user: 'app', pass: secret });
    const names = uniqueNames('auth');
    const dir = tempDir();
    try {
      await createStreams(nc, names);
      await publishInput(nc, names, 1, 0, 300, KEYS);
      const connection = { servers: `nats://app:${secret}@127.0.0.1:${server.port}` };
      const job = await natsJob({ names, splits: 1, parallelism: 1, connection, options: { checkpointStorage: dir } }).env.executeAsync('auth');
      await finish(job, nc, names.outStream, 300);
      expect(await streamContents(nc, names.outStream)).toEqual(oracle(1, 300, KEYS));
      for (const file of filesUnder(dir)) expect(readFileSync(file).includes(secret), file).toBe(false);
      const wrong = natsJob({
        names,
        splits: 1,
        parallelism: 1,
        connection: { servers: `nats://127.0.0.1:${server.port}`, user: 'app', password: 'sekret-wrong', connectTimeoutMs: 2_000 },
        options: { restartStrategy: { type: 'none' } },
      });
      const error = await wrong.env.execute('wrong').catch((e: unknown) => e);
      const text = errorChain(error)
        .map((e) => `${e.message} ${JSON.stringify(e)}`)
        .join('\n');
      expect(text).toContain(`NATS at 127.0.0.1:${server.port} (user app)`);
      expect(text).not.toContain('sekret-wrong');
    } finally {
      await nc.close();
      await server.kill();
    }
  });
});
