/** Shared pieces of the NATS JetStream connector tests: unique streams, a job, the oracle, reading a stream. */
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type JobClient, StreamEnvironment } from '../../../src/index.ts';
import { JetStreamSink, JetStreamSource } from '../../../src/connectors/nats/index.ts';
import type { StreamEnvironmentOptions } from '../../../src/index.ts';
import type { NatsConnectionOptions } from '../../../src/connectors/nats/index.ts';
import { keyedCount, until } from '../../support/jobs.ts';

let counter = 0;

/** Names no other test uses: stream IN (subjects `<base>.in.*`) and OUT (`<base>.out`). */
export interface Names {
  readonly base: string;
  readonly inStream: string;
  readonly outStream: string;
  readonly out: string;
  inSubject(split: number): string;
}

export function uniqueNames(name: string): Names {
  const tag = `${name}_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const base = `weirt.${tag}`;
  return {
    base,
    inStream: `WEIRT_IN_${tag}`,
    outStream: `WEIRT_OUT_${tag}`,
    out: `${base}.out`,
    inSubject: (split) => `${base}.in.${split}`,
  };
}

export async function natsClient(port = 4222, auth: { user?: string; pass?: string } = {}): Promise<NatsConnection> {
  return connect({ servers: [`127.0.0.1:${port}`], ...auth });
}

/** Creates IN and OUT (OUT with `duplicateWindowMs`, default JetStream's 2 minutes). */
export async function createStreams(nc: NatsConnection, n: Names, duplicateWindowMs = 120_000): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: n.inStream, subjects: [`${n.base}.in.*`] });
  await jsm.streams.add({ name: n.outStream, subjects: [n.out], duplicate_window: duplicateWindowMs * 1_000_000 });
}

export async function deleteStreams(nc: NatsConnection, n: Names): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const s of [n.inStream, n.outStream]) await jsm.streams.delete(s).catch(() => {});
}

/** Publishes `{k}` messages from..to-1 to each of `splits` input subjects; key i of split s is `k${(i*7919+s) % keys}`. */
export async function publishInput(nc: NatsConnection, n: Names, splits: number, from: number, to: number, keys: number): Promise<void> {
  const js = jetstream(nc);
  for (let s = 0; s < splits; s++) {
    const acks: Promise<unknown>[] = [];
    for (let i = from; i < to; i++) acks.push(js.publish(n.inSubject(s), `k${(i * 7919 + s) % keys}`));
    await Promise.all(acks);
  }
}

export function oracle(splits: number, perSplit: number, keys: number): string[] {
  const counts = new Map<string, number>();
  const out: string[] = [];
  for (let s = 0; s < splits; s++)
    for (let i = 0; i < perSplit; i++) {
      const k = `k${(i * 7919 + s) % keys}`;
      const c = (counts.get(k) ?? 0) + 1;
      counts.set(k, c);
      out.push(`${k}:${c}`);
    }
  return out.sort();
}

export async function streamCount(nc: NatsConnection, stream: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(stream)).state.messages;
}

/** Every message of `stream` as text, sorted. */
export async function streamContents(nc: NatsConnection, stream: string): Promise<string[]> {
  const total = await streamCount(nc, stream);
  const out: string[] = [];
  if (total === 0) return out;
  const consumer = await jetstream(nc).consumers.get(stream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume({ max_messages: 1000 });
  for await (const m of messages) {
    out.push(m.string());
    if (out.length >= total) break;
  }
  await messages.close();
  return out.sort();
}

export interface NatsJob {
  readonly names: Names;
  readonly splits: number;
  readonly parallelism: number;
  /** Discover the input subjects (`<base>.in.*`) at open instead of listing them. */
  readonly discover?: boolean;
  readonly connection?: NatsConnectionOptions;
  readonly options?: StreamEnvironmentOptions;
}

/** JetStream IN (one split per input subject) -> key -> keyed count -> `k:n` published to OUT. */
export function natsJob(j: NatsJob): { env: StreamEnvironment; sink: JetStreamSink<string> } {
  const env = StreamEnvironment.create({
    parallelism: j.parallelism,
    checkpointing: { intervalMs: 30, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 10, delayMs: 50 },
    ...j.options,
  });
  const decoder = new TextDecoder();
  const sink = new JetStreamSink<string>({ subject: j.names.out, toData: (s) => s, connection: j.connection });
  env
    .fromSource(
      new JetStreamSource({
        stream: j.names.inStream,
        ...(j.discover ? { discoverSubjects: `${j.names.base}.in.*` } : { subjects: Array.from({ length: j.splits }, (_, s) => j.names.inSubject(s)) }),
        connection: j.connection,
        batchMessages: 200,
        decode: (r) => decoder.decode(r.data),
        name: 'nats-in',
      }),
    )
    .uid('nats-in')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .name('count')
    .sinkTo(sink)
    .uid('nats-out');
  return { env, sink };
}

/** Waits until OUT holds `count` messages and a checkpoint after that completed, then cancels. */
export async function finish(job: JobClient, nc: NatsConnection, stream: string, count: number): Promise<void> {
  await until(`${count} messages in ${stream}`, async () => (await streamCount(nc, stream)) >= count, 120_000);
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
