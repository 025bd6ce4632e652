/**
 * The protocol link over real loopback sockets: 20k messages of mixed types (deploy, frame with
 * binary payloads, credit, ack) arrive intact and in order, sent in one turn and over many turns in
 * both directions at once; bytes that are not a message close the connection with a ProtocolError;
 * close() drops what was sent in its turn and the peer learns of it.
 */
import type * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointAck } from '../../../src/checkpoint/ack.ts';
import { epochOf } from '../../../src/cluster/transport/epoch.ts';
import { framedSocket } from '../../../src/cluster/transport/framing.ts';
import { encodeMessage, type ProtocolMessage } from '../../../src/cluster/transport/message-codec.ts';
import { type SocketLink, socketLink } from '../../../src/cluster/transport/socket-link.ts';
import { type ClusterError, ProtocolError } from '../../../src/core/errors.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import { expectSame, socketPair, within } from './loopback.ts';

type Link = SocketLink<ProtocolMessage, ProtocolMessage>;

const open: net.Socket[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.destroy();
});

async function links(): Promise<[Link, Link, net.Socket, net.Socket]> {
  const [rawA, rawB] = await socketPair();
  open.push(rawA, rawB);
  return [socketLink(framedSocket(rawA)), socketLink(framedSocket(rawB)), rawA, rawB];
}

function ack(i: number): CheckpointAck {
  return {
    task: { vertex: i % 3, subtask: i % 7 },
    checkpointId: checkpointId(i),
    operators: [{ uid: `op-${i}`, keyed: [], operator: null, channels: [] }],
    metrics: {
      syncMs: 1,
      asyncMs: 2.5,
      alignmentMs: 0,
      alignmentRecords: 0,
      persistedBytes: i * 10,
      stateBytes: i * 10,
      channelStateBytes: 0,
      unaligned: false,
      barrierArrivalsMs: [1700000000000 + i],
      buffersAhead: [],
      syncStartMs: 1700000000000,
    },
  };
}

/** Message i of a mixed stream; its index is recoverable from every type. */
function message(i: number): ProtocolMessage {
  const epoch = epochOf(1, 2);
  switch (i % 4) {
    case 0:
      return {
        type: 'deploy',
        epoch,
        runId: `run-${i}`,
        fingerprint: { vertices: [{ name: 'map', parallelism: 2, uids: ['a', 'b'] }] },
        placement: { taskManagers: 2, ofSubtask: [0, 1] },
        restore: null,
        firstCheckpointFull: i % 8 === 0,
      };
    case 1:
      return { type: 'frame', channel: i, frame: Uint8Array.from({ length: i % 300 }, (_, j) => (i + j) & 0xff) };
    case 2:
      return { type: 'credit', channel: i, buffers: i % 16 };
    default:
      return { type: 'ack', epoch, ack: ack(i) };
  }
}

function collect(link: Link, count: number): Promise<ProtocolMessage[]> {
  const got: ProtocolMessage[] = [];
  return within(60_000, `${count} messages`, (done) =>
    link.onMessage((m) => {
      got.push(m);
      if (got.length === count) done(got);
    }),
  );
}

const N = 20_000;
const expected = Array.from({ length: N }, (_, i) => message(i));

describe('socketLink', () => {
  it(`delivers ${N} mixed messages sent in one turn, intact and in order`, async () => {
    const [a, b] = await links();
    const arrived = collect(b, N);
    for (const m of expected) a.send(m);
    expectSame(await arrived, expected);
    expect(a.traffic().bytesSent).toBe(b.traffic().bytesReceived);
    a.close();
    b.close();
  });

  it(`delivers ${N} messages sent over many turns, both directions at once, FIFO each way`, async () => {
    const [a, b] = await links();
    const atB = collect(b, N);
    const atA = collect(a, N);
    for (let i = 0; i < N; i += 97) {
      for (let j = i; j < Math.min(N, i + 97); j++) {
        a.send(expected[j]!);
        b.send(expected[N - 1 - j]!);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expectSame(await atB, expected);
    expectSame(await atA, [...expected].reverse());
    a.close();
    b.close();
  });

  it('hands over each frame payload as a Uint8Array of its own', async () => {
    const [a, b] = await links();
    const arrived = collect(b, 2);
    a.send({ type: 'frame', channel: 1, frame: Uint8Array.of(1, 2, 3) });
    a.send({ type: 'frame', channel: 2, frame: Uint8Array.of(4) });
    for (const m of await arrived) {
      const f = (m as { frame: Uint8Array }).frame;
      expect(f.constructor).toBe(Uint8Array);
      expect(f.byteOffset).toBe(0);
      expect(f.buffer.byteLength).toBe(f.byteLength);
    }
  });

  it('closes with a ProtocolError when a frame is not a protocol message (bad magic)', async () => {
    const [rawA, rawB] = await socketPair();
    open.push(rawA, rawB);
    const sender = framedSocket(rawA);
    const b: Link = socketLink(framedSocket(rawB));
    const delivered: ProtocolMessage[] = [];
    b.onMessage((m) => delivered.push(m));
    const closed = within(30_000, 'the receiver closed', (done: (e: Error) => void) => b.onClose!(done));
    const good = encodeMessage({ type: 'credit', channel: 1, buffers: 2 });
    const bad = good.slice();
    bad[0] = 0x42;
    sender.write(good);
    sender.write(bad);
    sender.write(good);
    const err = await closed;
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).field).toBe('magic');
    expect(err!.message).toContain('magic byte 0x42 found, 0x57 expected');
    expect(delivered).toEqual([{ type: 'credit', channel: 1, buffers: 2 }]);
  });

  it('drops what was sent in the turn it closed; the peer hears CLUSTER_CONNECTION_LOST', async () => {
    const [a, b] = await links();
    const delivered: ProtocolMessage[] = [];
    b.onMessage((m) => delivered.push(m));
    const closedB = within(30_000, 'b closed', (done: (e: Error) => void) => b.onClose(done));
    let heardByA: Error | null = null;
    a.onClose((e) => (heardByA = e));
    a.send({ type: 'credit', channel: 0, buffers: 1 });
    a.close();
    a.send({ type: 'credit', channel: 0, buffers: 2 });
    expect(((await closedB) as ClusterError).code).toBe('CLUSTER_CONNECTION_LOST');
    expect(heardByA).toBeNull(); // the end that closed hears nothing (Link.onClose)
    expect(delivered).toEqual([]);
  });
});
