/**
 * Redis streams in -> keyed count -> Redis stream out, against the real server: exactly-once
 * output under injected failures, rescale through a savepoint, a server restart mid-run (a private
 * server, so the shared one keeps serving others), a server down at start, and the password kept
 * out of errors and checkpoints.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError } from '../../../src/index.ts';
import type { FaultSite } from '../../../src/runtime/faults.ts';
import { whenRunning } from '../../support/clients.ts';
import { FaultPlan, type PlannedFault } from '../../support/fault-plan.ts';
import { tempDir, until } from '../../support/jobs.ts';
import { freePort, PrivateServer } from '../../support/servers.ts';
import { cleanup, client, fill, finish, oracle, output, redisJob, uniquePrefix } from './redis-support.ts';

const PER_STREAM = 1_500;
const KEYS = 30;

let shared: Redis;
beforeAll(async () => {
  shared = await client();
});
afterAll(async () => {
  shared.disconnect();
});

function streams(prefix: string, n = 3): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}:in${i}`);
}

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

describe('Redis streams -> keyed count -> Redis stream (exactly-once)', () => {
  it.each([
    ['no fault', null],
    ['source poll', f('process', 'redis-in', 3, 1)],
    ['source sync phase', f('sync-phase', 'redis-in', 2, 0)],
    ['keyed count', f('process', 'count', 3, 1)],
    ['sink commit', f('commit', 'count', 1, 0)],
  ] as const)('%s: every output entry exactly once', async (_name, fault) => {
    const prefix = uniquePrefix('eo');
    const inputs = streams(prefix);
    const out = `${prefix}:out`;
    try {
      await fill(shared, inputs, 0, PER_STREAM, KEYS);
      const plan = new FaultPlan(fault ? [fault] : []);
      const job = await redisJob({ inputs, out, parallelism: 2, options: { checkpointStorage: tempDir() } }).executeAsync('redis-eo', { faults: plan });
      await finish(job, shared, out, 3 * PER_STREAM);
      expect(plan.fired.length).toBe(fault ? 1 : 0);
      expect((await job.result).restarts).toBe(fault ? 1 : 0);
      expect(await output(shared, out)).toEqual(oracle(3, PER_STREAM, KEYS));
    } finally {
      await cleanup(shared, prefix);
    }
  });

  it('rescales the source 2 -> 3 through a savepoint: entries before and after it, each once', async () => {
    const prefix = uniquePrefix('rescale');
    const inputs = streams(prefix, 4);
    const out = `${prefix}:out`;
    const root = tempDir();
    try {
      await fill(shared, inputs, 0, 500, KEYS);
      const first = await redisJob({ inputs, out, parallelism: 2, options: { checkpointStorage: join(root, 'chk') } }).executeAsync('rescale');
      await until('the first 2,000 entries out', async () => (await shared.xlen(out)) >= 2_000);
      const savepoint = await first.stopWithSavepoint(join(root, 'sp'));
      await first.result;
      await fill(shared, inputs, 500, 1_000, KEYS);
      const second = await redisJob({ inputs, out, parallelism: 3, options: { checkpointStorage: join(root, 'chk') } }).executeAsync('rescale', {
        restoreFrom: savepoint,
      });
      await finish(second, shared, out, 4_000);
      expect(await output(shared, out)).toEqual(oracle(4, 1_000, KEYS));
    } finally {
      await cleanup(shared, prefix);
    }
  });
});

describe('Redis failures', () => {
  it('a server down at start fails the job with one error naming the server and address', async () => {
    const port = await freePort();
    const env = redisJob({
      inputs: ['x'],
      out: 'y',
      parallelism: 1,
      connection: { host: '127.0.0.1', port, password: 'sekret-down' },
      options: { restartStrategy: { type: 'none' } },
    });
    const error = await env.execute('down').catch((e: unknown) => e);
    const connector = errorChain(error).find((e) => e instanceof ConnectorError) as ConnectorError | undefined;
    expect(connector?.code).toBe('CONNECTOR_UNREACHABLE');
    expect(connector?.system).toBe(`Redis at 127.0.0.1:${port} (db 0)`);
    const text = errorChain(error)
      .map((e) => e.message)
      .join('\n');
    expect(text).toContain(`Redis at 127.0.0.1:${port}`);
    expect(text).not.toContain('sekret-down');
  });

  it('a server restart mid-run: the job fails over and recovers without loss or duplicates', async () => {
    const server = await PrivateServer.redis();
    const c = await client(server.port);
    const prefix = uniquePrefix('restart');
    const inputs = streams(prefix);
    const out = `${prefix}:out`;
    try {
      await fill(c, inputs, 0, PER_STREAM, KEYS);
      const connection = { host: '127.0.0.1', port: server.port };
      const job = await redisJob({ inputs, out, parallelism: 2, connection, options: { checkpointStorage: tempDir() } }).executeAsync('restart');
      await whenRunning(job);
      await until('some output', async () => (await c.xlen(out)) > 0);
      c.disconnect();
      await server.restart();
      const again = await client(server.port);
      try {
        await finish(job, again, out, 3 * PER_STREAM);
        expect((await job.result).restarts).toBeGreaterThanOrEqual(1);
        expect(await output(again, out)).toEqual(oracle(3, PER_STREAM, KEYS));
      } finally {
        again.disconnect();
      }
    } finally {
      await server.kill();
    }
  });

  it('the password reaches the server but never an error or a checkpoint', async () => {
    const secret = 'sekret-7f3a9c';
    const server = await PrivateServer.redis(['--requirepass', secret]);
    const c = await client(server.port, secret);
    const prefix = uniquePrefix('auth');
    const inputs = streams(prefix, 1);
    const out = `${prefix}:out`;
    const dir = tempDir();
    try {
      await fill(c, inputs, 0, 300, KEYS);
      const connection = { url: `redis://:${secret}@127.0.0.1:${server.port}` };
      const job = await redisJob({ inputs, out, parallelism: 1, connection, options: { checkpointStorage: dir } }).executeAsync('auth');
      await finish(job, c, out, 300);
      expect(await output(c, out)).toEqual(oracle(1, 300, KEYS));
      for (const file of filesUnder(dir)) expect(readFileSync(file).includes(secret), file).toBe(false);
      const wrong = redisJob({
        inputs,
        out,
        parallelism: 1,
        connection: { host: '127.0.0.1', port: server.port, password: 'sekret-wrong' },
        options: { restartStrategy: { type: 'none' } },
      });
      const error = await wrong.execute('wrong').catch((e: unknown) => e);
      const text = errorChain(error)
        .map((e) => `${e.message} ${JSON.stringify(e)}`)
        .join('\n');
      expect(text).toContain(`Redis at 127.0.0.1:${server.port}`);
      expect(text).not.toContain('sekret-wrong');
    } finally {
      c.disconnect();
      await server.kill();
    }
  });
});
