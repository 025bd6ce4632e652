/** Shared pieces of the Redis connector tests: unique key names, a job, the oracle, the output. */
import { Redis } from 'ioredis';
import { type JobClient, StreamEnvironment } from '../../../src/index.ts';
import { RedisStreamSink, RedisStreamSource } from '../../../src/connectors/redis/index.ts';
import type { StreamEnvironmentOptions } from '../../../src/index.ts';
import type { RedisConnectionOptions } from '../../../src/connectors/redis/index.ts';
import { keyedCount, until } from '../../support/jobs.ts';

let counter = 0;
/** A prefix no other test (or run) uses; `cleanup` deletes every key under it. */
export function uniquePrefix(name: string): string {
  return `weir-test:${name}:${process.pid}:${Date.now().toString(36)}:${counter++}`;
}

export async function client(port = 6379, password?: string): Promise<Redis> {
  const c = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 1 });
  await c.connect();
  return c;
}

export async function cleanup(c: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await c.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await c.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await c.del(`weir:sink-commits:${prefix}:out`);
}

/** Appends `count` entries `{k}` to each input stream; key i of stream s is `k${(i*7919+s) % keys}`. */
export async function fill(c: Redis, inputs: readonly string[], from: number, to: number, keys: number): Promise<void> {
  for (const [s, stream] of inputs.entries()) {
    const pipe = c.pipeline();
    for (let i = from; i < to; i++) pipe.xadd(stream, '*', 'k', `k${(i * 7919 + s) % keys}`);
    await pipe.exec();
  }
}

/** `k:n` for every entry of the inputs, counted per key in stream order (the keyed count's output as a multiset). */
export function oracle(inputs: number, perStream: number, keys: number): string[] {
  const counts = new Map<string, number>();
  const out: string[] = [];
  for (let s = 0; s < inputs; s++)
    for (let i = 0; i < perStream; i++) {
      const k = `k${(i * 7919 + s) % keys}`;
      const n = (counts.get(k) ?? 0) + 1;
      counts.set(k, n);
      out.push(`${k}:${n}`);
    }
  return out.sort();
}

export async function output(c: Redis, stream: string): Promise<string[]> {
  const entries = await c.xrange(stream, '-', '+');
  return entries.map(([, fields]) => fields[1]!).sort();
}

export interface RedisJob {
  readonly inputs: readonly string[];
  readonly out: string;
  readonly parallelism: number;
  readonly connection?: RedisConnectionOptions;
  readonly options?: StreamEnvironmentOptions;
}

/** Redis streams -> key -> keyed count -> `k:n` appended to `out`. */
export function redisJob(j: RedisJob): StreamEnvironment {
  const env = StreamEnvironment.create({
    parallelism: j.parallelism,
    checkpointing: { intervalMs: 30, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 10, delayMs: 20 },
    ...j.options,
  });
  env
    .fromSource(new RedisStreamSource({ keys: j.inputs, connection: j.connection, blockMs: 50, batchEntries: 200, decode: (e) => e.fields.k! }))
    .uid('redis-in')
    .name('redis-in')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .name('count')
    .sinkTo(new RedisStreamSink<string>({ key: j.out, toFields: (v) => ({ v }), connection: j.connection }))
    .uid('redis-out');
  return env;
}

/** Waits until `out` holds `count` entries and a checkpoint after that completed, then cancels. */
export async function finish(job: JobClient, c: Redis, out: string, count: number): Promise<void> {
  await until(`${count} entries in ${out}`, async () => (await c.xlen(out)) >= count, 120_000);
  await until('a checkpoint after the output was complete', async () => {
    try {
      await job.triggerCheckpoint();
      return true;
    } catch {
      return false;
    }
  });
  await job.cancel();
}
