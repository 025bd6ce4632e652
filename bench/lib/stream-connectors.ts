/**
 * The Redis Streams and NATS JetStream part of the connectors scenario: messages per second
 * through each source and each exactly-once sink in a Weir job (parallelism 1, checkpoints every
 * `checkpointIntervalMs`), and for each sink a hand-written loop doing the same writes with the
 * same client (pipelined XADDs; publishes with a message id, the same number in flight), so the
 * ratio says what exactly-once costs. Variants alternate over rounds; medians are reported.
 *
 *   <x>_source  messages already in the stream -> source -> a counting plain sink; timed from
 *               execute until every message was counted
 *   <x>_sink    generated records -> exactly-once sink; timed from execute to the job's end (its
 *               final checkpoint committed)
 *   <x>_plain   the hand-written loop writing the same messages
 *
 * Servers: Redis at 127.0.0.1:6379 and NATS at 127.0.0.1:4222 (or REDIS_URL / NATS_URL). Every
 * variant uses stream names of its own, deleted at the end.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { StreamEnvironment } from '../../src/index.ts';
import { RedisStreamSink, RedisStreamSource } from '../../src/connectors/redis/index.ts';
import { JetStreamSink, JetStreamSource } from '../../src/connectors/nats/index.ts';
import type { Sink, Source } from '../../src/index.ts';
import { median, startTimer, type Figures } from './result.ts';

export interface StreamConnectorParams {
  readonly messages: number;
  readonly rounds: number;
  readonly checkpointIntervalMs: number;
}

const tag = `${process.pid}_${Date.now().toString(36)}`;
const payload = (i: number): string => `{"id":${i},"k":"key-${i % 1000}","v":${i * 7}}`;

/** A plain sink that counts what reaches it, so a source can be timed to its last message. */
function countingSink(counter: { n: number }): Sink<unknown> {
  return { name: 'count', kind: 'plain', createWriter: () => ({ write: () => void counter.n++ }) };
}

async function timeSource(source: Source<unknown>, messages: number, p: StreamConnectorParams): Promise<number> {
  const counter = { n: 0 };
  const env = StreamEnvironment.create({ parallelism: 1, checkpointing: { intervalMs: p.checkpointIntervalMs } });
  env.fromSource(source).uid('in').sinkTo(countingSink(counter)).uid('count');
  const elapsed = startTimer();
  const job = await env.executeAsync('bench-source');
  while (counter.n < messages) {
    if (job.metrics().status === 'FAILED') throw new Error('source job failed');
    await new Promise((r) => setTimeout(r, 1));
  }
  const ms = elapsed().ms;
  await job.cancel();
  if (counter.n !== messages) throw new Error(`source: counted ${counter.n} messages, expected ${messages}`);
  return messages / (ms / 1000);
}

async function timeSink(sink: Sink<string> | RedisStreamSink<string> | JetStreamSink<string>, messages: number, p: StreamConnectorParams): Promise<number> {
  const env = StreamEnvironment.create({ parallelism: 1, checkpointing: { intervalMs: p.checkpointIntervalMs } });
  env
    .generate({ count: messages }, (i) => payload(i))
    .uid('gen')
    .sinkTo(sink as Sink<string>)
    .uid('out');
  const elapsed = startTimer();
  const result = await env.execute('bench-sink');
  if (result.status !== 'FINISHED') throw new Error(`sink job ended ${result.status}`);
  return messages / (elapsed().ms / 1000);
}

async function redisFigures(p: StreamConnectorParams, log: (line: string) => void): Promise<Figures> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(url);
  const keys: string[] = [];
  const rates: Record<string, number[]> = { redis_source: [], redis_sink: [], redis_plain: [] };
  try {
    for (let round = 0; round < p.rounds; round++) {
      const input = `weir-bench:${tag}:in:${round}`;
      keys.push(input);
      for (let start = 0; start < p.messages; start += 1000) {
        const pipe = redis.pipeline();
        for (let i = start; i < Math.min(p.messages, start + 1000); i++) pipe.xadd(input, '*', 'v', payload(i));
        await pipe.exec();
      }
      rates.redis_source!.push(await timeSource(new RedisStreamSource({ keys: [input], connection: { url }, decode: (e) => e.fields.v }), p.messages, p));
      const out = `weir-bench:${tag}:out:${round}`;
      keys.push(out, `weir:sink-commits:${out}`);
      rates.redis_sink!.push(await timeSink(new RedisStreamSink<string>({ key: out, toFields: (v) => ({ v }), connection: { url } }), p.messages, p));
      if ((await redis.xlen(out)) !== p.messages) throw new Error(`redis sink: ${await redis.xlen(out)} entries, expected ${p.messages}`);
      const plain = `weir-bench:${tag}:plain:${round}`;
      keys.push(plain);
      const elapsed = startTimer();
      for (let start = 0; start < p.messages; start += 1000) {
        const pipe = redis.pipeline();
        for (let i = start; i < Math.min(p.messages, start + 1000); i++) pipe.xadd(plain, '*', 'v', payload(i));
        await pipe.exec();
      }
      rates.redis_plain!.push(p.messages / (elapsed().ms / 1000));
      log(`redis round ${round + 1}: ${['redis_source', 'redis_sink', 'redis_plain'].map((k) => `${k} ${Math.round(rates[k]!.at(-1)!)}/s`).join(', ')}`);
    }
  } finally {
    if (keys.length > 0) await redis.del(...keys).catch(() => {});
    redis.disconnect();
  }
  return Object.fromEntries(Object.entries(rates).map(([k, v]) => [`${k}_msgs_per_sec`, median(v)]));
}

async function natsFigures(p: StreamConnectorParams, log: (line: string) => void): Promise<Figures> {
  const servers = process.env.NATS_URL ?? '127.0.0.1:4222';
  const nc = await connect({ servers: servers.split(',') });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const streams: string[] = [];
  const rates: Record<string, number[]> = { nats_source: [], nats_sink: [], nats_plain: [] };
  const publishAll = async (subject: string, withIds: string | null): Promise<void> => {
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < p.messages; i++) {
      const ack: Promise<unknown> = js
        .publish(subject, payload(i), withIds === null ? undefined : { msgID: `${withIds}${i}` })
        .finally(() => inFlight.delete(ack));
      inFlight.add(ack);
      if (inFlight.size >= 256) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  };
  try {
    for (let round = 0; round < p.rounds; round++) {
      const base = `weirbench.${tag}.${round}`;
      const name = `WEIRBENCH_${tag}_${round}`;
      streams.push(name);
      await jsm.streams.add({ name, subjects: [`${base}.>`] });
      await publishAll(`${base}.in`, null);
      const decoder = new TextDecoder();
      rates.nats_source!.push(
        await timeSource(
          new JetStreamSource({ stream: name, subjects: [`${base}.in`], connection: { servers }, decode: (r) => decoder.decode(r.data) }),
          p.messages,
          p,
        ),
      );
      rates.nats_sink!.push(await timeSink(new JetStreamSink<string>({ subject: `${base}.out`, toData: (s) => s, connection: { servers } }), p.messages, p));
      const elapsed = startTimer();
      await publishAll(`${base}.plain`, `plain/${round}/`);
      rates.nats_plain!.push(p.messages / (elapsed().ms / 1000));
      const info = await jsm.streams.info(name);
      if (info.state.messages !== 3 * p.messages) throw new Error(`nats: ${info.state.messages} messages in ${name}, expected ${3 * p.messages}`);
      log(`nats round ${round + 1}: ${['nats_source', 'nats_sink', 'nats_plain'].map((k) => `${k} ${Math.round(rates[k]!.at(-1)!)}/s`).join(', ')}`);
    }
  } finally {
    for (const s of streams) await jsm.streams.delete(s).catch(() => {});
    await nc.close();
  }
  return Object.fromEntries(Object.entries(rates).map(([k, v]) => [`${k}_msgs_per_sec`, median(v)]));
}

/** Measures both systems; returns metrics and the sinks' ratios against their hand-written loops. */
export async function streamConnectorFigures(p: StreamConnectorParams, log: (line: string) => void): Promise<{ metrics: Figures; ratios: Figures }> {
  const metrics = { ...(await redisFigures(p, log)), ...(await natsFigures(p, log)) };
  const ratios: Figures = {
    redis_sink_vs_plain: metrics.redis_sink_msgs_per_sec! / metrics.redis_plain_msgs_per_sec!,
    nats_sink_vs_plain: metrics.nats_sink_msgs_per_sec! / metrics.nats_plain_msgs_per_sec!,
  };
  return { metrics, ratios };
}
