/**
 * The connection handshake over real loopback sockets: the right token is welcomed with bodies
 * passed both ways; a wrong token, another join or protocol version, or admit()'s refusal are
 * refused on both sides with reasons naming what differed; a server that cannot prove the token
 * is refused by the client; a silent client is closed; a dial to a closed port, a silent server
 * and a server that speaks something else fail as CLUSTER_UNREACHABLE; frames that follow the
 * handshake at once (in the same chunk) reach the new owner; a non-loopback listener needs TLS.
 */
import * as net from 'node:net';
import * as os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../../src/cluster/transport/address.ts';
import { type FramedSocket, framedSocket } from '../../../src/cluster/transport/framing.ts';
import { dialPeer, type ListenOptions, listenPeers, type PeerHello, type PeerListener } from '../../../src/cluster/transport/handshake.ts';
import {
  clientProof,
  decodeHandshake,
  encodeHandshake,
  type Hello,
  JOIN_MAGIC,
  JOIN_VERSION,
  newNonce,
} from '../../../src/cluster/transport/handshake-messages.ts';
import { encodeMessage, PROTOCOL_VERSION, type ProtocolMessage } from '../../../src/cluster/transport/message-codec.ts';
import type { DataMessage, ToJobMaster, ToTaskManager } from '../../../src/cluster/transport/protocol.ts';
import { socketLink } from '../../../src/cluster/transport/socket-link.ts';
import { ClusterError, ConfigError } from '../../../src/core/errors.ts';
import { closedPort, expectSame, within } from './loopback.ts';

const TOKEN = 'a-cluster-token-of-enough-length';
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A listener on 127.0.0.1 that records what it admitted and refused. */
async function listen(overrides: Partial<ListenOptions> = {}): Promise<{
  listener: PeerListener;
  peers: Array<{ framed: FramedSocket; hello: PeerHello; remote: string }>;
  refused: Array<{ remote: string; reason: string }>;
  nextPeer: () => Promise<FramedSocket>;
  nextRefusal: () => Promise<string>;
}> {
  const peers: Array<{ framed: FramedSocket; hello: PeerHello; remote: string }> = [];
  const refused: Array<{ remote: string; reason: string }> = [];
  const waitingPeers: Array<(f: FramedSocket) => void> = [];
  const waitingRefusals: Array<(r: string) => void> = [];
  const listener = await listenPeers({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    tls: null,
    insecure: false,
    handshakeTimeoutMs: 30_000,
    weirVersion: '9.9.9-test',
    admit: (hello) => ({ welcome: { taskManagerId: 7, echo: hello.body } }),
    onPeer: (framed, hello, remote) => {
      peers.push({ framed, hello, remote });
      cleanup.push(() => framed.close());
      waitingPeers.shift()?.(framed);
    },
    onRefused: (remote, reason) => {
      refused.push({ remote, reason });
      waitingRefusals.shift()?.(reason);
    },
    ...overrides,
  });
  cleanup.push(() => listener.close());
  return {
    listener,
    peers,
    refused,
    nextPeer: () => within(30_000, 'a peer', (done: (f: FramedSocket) => void) => waitingPeers.push(done)),
    nextRefusal: () => within(30_000, 'a refusal', (done: (r: string) => void) => waitingRefusals.push(done)),
  };
}

function dial(port: number, overrides: Partial<Parameters<typeof dialPeer>[0]> = {}): ReturnType<typeof dialPeer> {
  return dialPeer({
    host: '127.0.0.1',
    port,
    token: TOKEN,
    tls: null,
    role: 'control',
    body: { slots: 4, name: 'tm-1', tags: ['a', 'b'] },
    weirVersion: '9.9.9-test',
    timeoutMs: 30_000,
    ...overrides,
  }).then((dialed) => {
    cleanup.push(() => dialed.framed.close());
    return dialed;
  });
}

/** A raw client at the frame level: connected, with the server's challenge read. */
async function rawClient(port: number): Promise<{ framed: FramedSocket; nonce: Uint8Array; frames: Uint8Array[]; closed: Promise<Error | null> }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise((resolve) => socket.once('connect', resolve));
  const framed = framedSocket(socket);
  cleanup.push(() => framed.close());
  const frames: Uint8Array[] = [];
  const closed = new Promise<Error | null>((resolve) => framed.onClose(resolve));
  const challenge = await within(30_000, 'the challenge', (done: (f: Uint8Array) => void) =>
    framed.onFrame((f) => {
      frames.push(f.slice());
      if (frames.length === 1) done(f.slice());
    }),
  );
  return { framed, nonce: decodeHandshake(challenge, 'challenge').nonce, frames, closed };
}

function hello(serverNonce: Uint8Array, overrides: Partial<Hello> = {}): Hello {
  return {
    type: 'hello',
    joinVersion: JOIN_VERSION,
    protocolVersion: PROTOCOL_VERSION,
    role: 'data',
    weirVersion: 'raw',
    node: process.version,
    body: {},
    nonce: newNonce(),
    proof: clientProof(TOKEN, serverNonce),
    ...overrides,
  };
}

/** A server at the frame level: accepts one connection and hands its FramedSocket over. */
async function rawServer(): Promise<{ port: number; accepted: Promise<FramedSocket> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  const accepted = new Promise<FramedSocket>((resolve) =>
    server.once('connection', (socket) => {
      const framed = framedSocket(socket);
      cleanup.push(() => framed.close());
      resolve(framed);
    }),
  );
  return { port: (server.address() as net.AddressInfo).port, accepted };
}

async function rejection(p: Promise<unknown>): Promise<ClusterError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClusterError);
  return err as ClusterError;
}

describe('the handshake', () => {
  it('welcomes a client with the right token, passing bodies both ways, then carries protocol messages', async () => {
    const server = await listen();
    const peer = server.nextPeer();
    const { framed, welcome } = await dial(server.listener.port);
    expect(welcome).toEqual({ taskManagerId: 7, echo: { slots: 4, name: 'tm-1', tags: ['a', 'b'] } });
    const serverSide = await peer;
    const { hello: seen, remote } = server.peers[0]!;
    expect(seen).toEqual({
      joinVersion: JOIN_VERSION,
      protocolVersion: PROTOCOL_VERSION,
      role: 'control',
      weirVersion: '9.9.9-test',
      node: process.version,
      body: { slots: 4, name: 'tm-1', tags: ['a', 'b'] },
    });
    expect(remote).toMatch(/^127\.0\.0\.1:\d+$/);
    const client = socketLink<ToJobMaster, ToTaskManager>(framed);
    const jm = socketLink<ToTaskManager, ToJobMaster>(serverSide);
    const atJm = within(30_000, 'hello at the job master', (done: (m: ToJobMaster) => void) => jm.onMessage(done));
    const atTm = within(30_000, 'heartbeat at the task manager', (done: (m: ToTaskManager) => void) => client.onMessage(done));
    client.send({ type: 'hello' });
    jm.send({ type: 'heartbeat', epoch: { leader: 0, attempt: 0 }, seq: 1 });
    expect(await atJm).toEqual({ type: 'hello' });
    expect(await atTm).toEqual({ type: 'heartbeat', epoch: { leader: 0, attempt: 0 }, seq: 1 });
    expect(server.refused).toEqual([]);
  });

  it('refuses a wrong token on both sides: the client gets CLUSTER_REFUSED, the server logs the reason', async () => {
    const server = await listen();
    const refusal = server.nextRefusal();
    const err = await rejection(dial(server.listener.port, { token: 'another-token-of-enough-length' }));
    expect(err.code).toBe('CLUSTER_REFUSED');
    expect(err.peer).toBe(`127.0.0.1:${server.listener.port}`);
    expect(err.message).toBe(`127.0.0.1:${server.listener.port}: refused the connection: authentication failed: wrong cluster token`);
    expect(await refusal).toBe('authentication failed: wrong cluster token');
    expect(server.peers).toEqual([]);
  });

  it('refuses a server that cannot prove the token, and tells it why', async () => {
    const fake = await rawServer();
    const dialing = dial(fake.port);
    const framed = await fake.accepted;
    const fromClient = within(30_000, 'the client hello', (done: (f: Uint8Array[]) => void) => {
      const got: Uint8Array[] = [];
      framed.onFrame((f) => {
        got.push(f.slice());
        if (got.length === 2) done(got);
      });
    });
    framed.write(encodeHandshake({ type: 'challenge', magic: JOIN_MAGIC, joinVersion: JOIN_VERSION, protocolVersion: PROTOCOL_VERSION, nonce: newNonce() }));
    // It welcomes without knowing the token: a proof of another token.
    framed.write(encodeHandshake({ type: 'welcome', proof: clientProof('not-the-token-at-all-no', newNonce()), body: {} }));
    const err = await rejection(dialing);
    expect(err.code).toBe('CLUSTER_REFUSED');
    expect(err.message).toContain('did not prove it knows the cluster token');
    const [, refusal] = await fromClient;
    expect(decodeHandshake(refusal!, 'refused').reason).toContain('the server did not prove it knows the cluster token');
  });

  it('refuses a hello of another join version, naming both versions', async () => {
    const server = await listen();
    const client = await rawClient(server.listener.port);
    const refusal = server.nextRefusal();
    client.framed.write(encodeHandshake(hello(client.nonce, { joinVersion: 2 })));
    const reason = await refusal;
    expect(reason).toBe('handshake version mismatch: the client speaks join version 2, the server 1: run the same release of Weir on both');
    await client.closed;
    expect(decodeHandshake(client.frames[1]!, 'refused').reason).toBe(reason);
  });

  it('refuses a hello of another protocol version, naming both versions', async () => {
    const server = await listen();
    const client = await rawClient(server.listener.port);
    const refusal = server.nextRefusal();
    client.framed.write(encodeHandshake(hello(client.nonce, { protocolVersion: PROTOCOL_VERSION + 98 })));
    expect(await refusal).toBe(
      `protocol version mismatch: the client speaks protocol version ${PROTOCOL_VERSION + 98}, the server ${PROTOCOL_VERSION}: run the same release of Weir on both`,
    );
    expect(server.peers).toEqual([]);
  });

  it('the client refuses a challenge of another protocol version, naming both, and tells the server', async () => {
    const fake = await rawServer();
    const dialing = dial(fake.port);
    const framed = await fake.accepted;
    const fromClient = within(30_000, "the client's refusal", (done: (f: Uint8Array) => void) => framed.onFrame((f) => done(f.slice())));
    framed.write(encodeHandshake({ type: 'challenge', magic: JOIN_MAGIC, joinVersion: JOIN_VERSION, protocolVersion: 42, nonce: newNonce() }));
    const err = await rejection(dialing);
    expect(err.code).toBe('CLUSTER_REFUSED');
    expect(err.message).toContain(`the client speaks protocol version ${PROTOCOL_VERSION}, the server 42`);
    expect(decodeHandshake(await fromClient, 'refused').reason).toContain('protocol version mismatch');
  });

  it("passes admit()'s refusal reason to the client", async () => {
    const server = await listen({ admit: (h) => ({ refuse: `job module hash differs: ${String(h.body.name)} has abc, the job master def` }) });
    const err = await rejection(dial(server.listener.port));
    expect(err.code).toBe('CLUSTER_REFUSED');
    expect(err.message).toContain('refused the connection: job module hash differs: tm-1 has abc, the job master def');
    expect(server.refused.map((r) => r.reason)).toEqual(['job module hash differs: tm-1 has abc, the job master def']);
  });

  it('closes a client that does not finish the handshake in time', async () => {
    const server = await listen({ handshakeTimeoutMs: 200 });
    const refusal = server.nextRefusal();
    const client = await rawClient(server.listener.port);
    expect(await refusal).toBe('handshake timeout');
    expect(await client.closed).toBeInstanceOf(ClusterError);
  });

  it('closes connections still in handshake when the listener closes', async () => {
    const server = await listen();
    const client = await rawClient(server.listener.port);
    await server.listener.close();
    expect(((await client.closed) as ClusterError).code).toBe('CLUSTER_CONNECTION_LOST');
    const err = await rejection(dial(server.listener.port));
    expect(err.code).toBe('CLUSTER_UNREACHABLE');
  });

  it('fails as CLUSTER_UNREACHABLE naming host:port when the port is closed', async () => {
    const port = await closedPort();
    const err = await rejection(dial(port));
    expect(err.code).toBe('CLUSTER_UNREACHABLE');
    expect(err.message).toMatch(new RegExp(`^127\\.0\\.0\\.1:${port}: cannot connect: .*ECONNREFUSED`));
  });

  it('fails as CLUSTER_UNREACHABLE when the server never answers within the timeout', async () => {
    const silent = await rawServer();
    const err = await rejection(dial(silent.port, { timeoutMs: 200 }));
    expect(err.code).toBe('CLUSTER_UNREACHABLE');
    expect(err.message).toBe(`127.0.0.1:${silent.port}: connected, but no handshake within 200 ms`);
  });

  it('fails as CLUSTER_UNREACHABLE when the server speaks another protocol', async () => {
    const server = net.createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    const port = (server.address() as net.AddressInfo).port;
    const err = await rejection(dial(port));
    expect(err.code).toBe('CLUSTER_UNREACHABLE');
    expect(err.message).toContain('does not answer as a Weir job master or task manager');
  });

  it('loses no frame the server sends right after its welcome, nor one the client sends right after its hello', async () => {
    const burst = (from: number): DataMessage[] => [
      ...Array.from({ length: 500 }, (_, i): DataMessage => ({ type: 'credit', channel: from + i, buffers: 1 })),
      { type: 'frame', channel: -1, frame: new Uint8Array(2 * 1024 * 1024).fill(3) }, // over the handshake's frame limit
    ];
    const server = await listen({
      onPeer: (framed) => {
        const link = socketLink<DataMessage, DataMessage>(framed);
        for (const m of burst(1000)) link.send(m); // the same turn as the welcome: the same write
        cleanup.push(() => link.close());
        // Read what the raw client pipelined after its hello, later.
        setTimeout(() => link.onMessage((m) => fromClient.push(m)), 20);
      },
    });
    const fromClient: DataMessage[] = [];
    const { framed } = await dial(server.listener.port);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const link = socketLink<DataMessage, DataMessage>(framed);
    const atClient: DataMessage[] = [];
    await within(30_000, 'the burst at the client', (done: (v: null) => void) =>
      link.onMessage((m) => {
        atClient.push(m);
        if (atClient.length === 501) done(null);
      }),
    );
    expectSame(atClient, burst(1000));

    const raw = await rawClient(server.listener.port);
    raw.framed.write(encodeHandshake(hello(raw.nonce))); // hello and protocol frames in one write
    for (const m of burst(0)) raw.framed.write(encodeMessage(m as ProtocolMessage));
    await within(30_000, 'the pipelined burst at the server', (done: (v: null) => void) => {
      const poll = (): unknown => (fromClient.length === 501 ? done(null) : setTimeout(poll, 5));
      poll();
    });
    expectSame(fromClient, burst(0));
  });
});

describe('listening beyond loopback', () => {
  const nonLoopback = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;

  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', '::ffff:10.0.0.1']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses to listen on all interfaces without TLS, naming the way out', async () => {
    const err = await listen({ host: '0.0.0.0' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).option).toBe('tls');
    expect((err as Error).message).toContain('give certificates (--tls-cert, --tls-key, --tls-ca) or pass --insecure');
  });

  it.skipIf(nonLoopback === undefined)(`listens on a non-loopback address (${nonLoopback ?? 'none on this host: skipped'}) only with insecure`, async () => {
    const host = nonLoopback!;
    await expect(listen({ host })).rejects.toThrow(ConfigError);
    const server = await listen({ host, insecure: true });
    const { welcome } = await dial(server.listener.port, { host });
    expect(welcome.taskManagerId).toBe(7);
  });
});
