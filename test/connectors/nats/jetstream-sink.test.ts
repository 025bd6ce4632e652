/**
 * The JetStream sink's writer driven directly against the real server: a committed epoch is
 * published once however often it is committed again within the stream's duplicate window (by the
 * same run or a restored one), nothing is visible before the commit, and beyond the window a
 * repeated commit publishes duplicates — the limit the docs state.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/index.ts';
import { JetStreamSink, JetStreamSource } from '../../../src/connectors/nats/index.ts';
import { resolveNatsConnection, describeNats, natsError } from '../../../src/connectors/nats/settings.ts';
import { runtimeContext } from '../../support/runtime-context.ts';
import { createStreams, deleteStreams, natsClient, streamContents, streamCount, uniqueNames } from './nats-support.ts';

let nc: NatsConnection;
beforeAll(async () => {
  nc = await natsClient();
});
afterAll(async () => {
  await nc.close();
});

describe('JetStreamSink writer', () => {
  it('publishes a committed epoch once, however often and by whichever run it is committed again', async () => {
    const names = uniqueNames('sink');
    await createStreams(nc, names);
    try {
      const sink = new JetStreamSink<string>({ subject: names.out, toData: (s) => s, connection: { servers: '127.0.0.1:4222' } });
      const w = sink.createWriter();
      await w.open(runtimeContext({ uid: 'out', runId: 'run-a' }), []);
      for (let i = 0; i < 50; i++) w.write(`m${i}`);
      const c1 = w.preCommit(1)!;
      expect(c1.idPrefix).toBe('out/0/1/run-a/');
      expect(w.preCommit(2)).toBeNull();
      expect(await streamCount(nc, names.outStream)).toBe(0);
      await w.commit([c1]);
      await w.commit([c1]);
      const again = sink.createWriter();
      await again.open(runtimeContext({ uid: 'out', runId: 'run-b' }), [c1]);
      await again.commit([c1]);
      expect(await streamCount(nc, names.outStream)).toBe(50);
      expect(sink.counts).toEqual({ published: 150, duplicates: 100 });
      expect(await streamContents(nc, names.outStream)).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`).sort());
      w.close!();
      again.close!();
    } finally {
      await deleteStreams(nc, names);
    }
  });

  it('beyond the duplicate window a repeated commit publishes duplicates (the stated limit)', async () => {
    const names = uniqueNames('window');
    await createStreams(nc, names, 500);
    try {
      const sink = new JetStreamSink<string>({ subject: names.out, toData: (s) => s });
      const w = sink.createWriter();
      await w.open(runtimeContext({ uid: 'out' }), []);
      for (let i = 0; i < 10; i++) w.write(`m${i}`);
      const c = w.preCommit(1)!;
      await w.commit([c]);
      await w.commit([c]);
      expect(await streamCount(nc, names.outStream)).toBe(10);
      await new Promise((r) => setTimeout(r, 1_500)); // past the 500 ms window (the server prunes ids about once a second)
      await w.commit([c]);
      expect(await streamCount(nc, names.outStream)).toBe(20);
      w.close!();
    } finally {
      await deleteStreams(nc, names);
    }
  });

  it('a subject no stream captures fails the commit with an error naming the server', async () => {
    const sink = new JetStreamSink<string>({ subject: `weirt.nostream.${process.pid}`, toData: (s) => s });
    const w = sink.createWriter();
    await w.open(runtimeContext({ uid: 'out' }), []);
    w.write('x');
    const err = await w.commit([w.preCommit(1)!]).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^NATS at 127\.0\.0\.1:4222: jetstream-sink weirt\.nostream\.\d+, subtask 0: publishing out\/0\/1\/run-0\/\*/);
    w.close!();
  });

  it('checks its options, naming the one at fault', () => {
    expect(() => new JetStreamSink({ subject: 'a.*' })).toThrow(ConfigError);
    expect(() => new JetStreamSink({ subject: 'a', publishesInFlightMax: 0 })).toThrow(/JetStreamSink.publishesInFlightMax/);
    expect(() => new JetStreamSink({ subject: 'a', connection: { servers: 'http://x' } })).toThrow(/JetStreamSink.connection: NATS server must be nats:\/\//);
  });
});

describe('JetStreamSource options', () => {
  it('checks its options, naming the one at fault', () => {
    expect(() => new JetStreamSource({ stream: 'a.b' })).toThrow(/JetStreamSource.stream/);
    expect(() => new JetStreamSource({ stream: 'S', subjects: ['x'], discoverSubjects: 'y.*' })).toThrow(/JetStreamSource.discoverSubjects: give either/);
    expect(() => new JetStreamSource({ stream: 'S', subjects: ['x', 'x'] })).toThrow(/lists a subject twice/);
    expect(() => new JetStreamSource({ stream: 'S', batchMessages: 0 })).toThrow(/JetStreamSource.batchMessages/);
  });
});

describe('NATS connection settings', () => {
  it('options win over the environment; credentials in a URL move out of it', () => {
    expect(resolveNatsConnection({}, {})).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      user: undefined,
      password: undefined,
      token: undefined,
      connectTimeoutMs: 10_000,
    });
    const c = resolveNatsConnection({}, { NATS_URL: 'nats://app:p%40ss@h1:4223,h2', NATS_TOKEN: 't0k' });
    expect(c).toEqual({ servers: ['nats://h1:4223', 'nats://h2:4222'], user: 'app', password: 'p@ss', token: 't0k', connectTimeoutMs: 10_000 });
    expect(resolveNatsConnection({ password: 'x' }, { NATS_URL: 'nats://app:y@h' }).password).toBe('x');
    expect(describeNats(c)).toBe('NATS at h1:4223,h2:4222 (user app)');
  });

  it('errors never carry the password or the token', () => {
    const c = resolveNatsConnection({ servers: 'nats://u:hunter2-secret@h:1', token: 'tok-secret' }, {});
    const err = natsError(c, 'cannot connect', new Error('bad hunter2-secret / tok-secret'), 'CONNECTOR_UNREACHABLE');
    expect(err.message).toBe('NATS at h:1 (user u): cannot connect: bad *** / ***');
    expect(() => resolveNatsConnection({ servers: 'nats://u:hunter2-secret@[x' })).toThrow(/nats:\/\/\*\*\*@\[x/);
  });
});
