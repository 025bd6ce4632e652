/**
 * The server side of the handshake (handshake.ts describes it): a listening socket, plain or
 * mutual TLS, that challenges every connection, checks its hello and admits it through the
 * caller's admit(), then hands the socket to onPeer. Connections still in handshake are bounded
 * in number and time.
 */
import { wallTimer } from '../../core/adapters.ts';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { assert } from '../../core/assert.ts';
import { ConfigError, errorMessage } from '../../core/errors.ts';
import { formatAddress, isLoopbackHost } from './address.ts';
import { type FramedSocket, framedSocket } from './framing.ts';
import { handOver, OURS, refuseAndEnd, remoteOf, tlsReason } from './handshake-common.ts';
import {
  checkHandshake,
  clientProof,
  encodeHandshake,
  HANDSHAKE_MAX_FRAME_BYTES,
  type Hello,
  JOIN_MAGIC,
  newNonce,
  type PeerHello,
  proofMatches,
  readHandshake,
  serverProof,
  versionMismatch,
} from './handshake-messages.ts';
import { serverTlsOptions, type TlsSettings } from './tls-settings.ts';

/** Connections at most in handshake at once; more are closed at once (the rest of the cluster is bounded too). */
const MAX_HANDSHAKES = 64;

/** Where a listener binds and whom it admits: what every owner of a listener (job master, task manager) configures. */
export interface ListenSettings {
  readonly host: string;
  /** 0 for any free port (PeerListener.port says which). */
  readonly port: number;
  readonly token: string;
  /** Mutual TLS with the cluster CA, or null for plain TCP (loopback only, unless `insecure`). */
  readonly tls: TlsSettings | null;
  /** Allow plain TCP on a non-loopback address (--insecure). */
  readonly insecure: boolean;
  /** A connection that has not finished the handshake this long after it was accepted is closed. */
  readonly handshakeTimeoutMs: number;
  readonly weirVersion: string;
}

export interface ListenOptions extends ListenSettings {
  /** The largest protocol frame accepted after the handshake (default DEFAULT_MAX_FRAME_BYTES). */
  readonly maxFrameBytes?: number;
  /** Decides on an authenticated client of the right versions: the welcome's body, or a reason to refuse (a throw refuses too). */
  admit(hello: PeerHello, remote: string): { welcome: Record<string, unknown> } | { refuse: string };
  /** An admitted client's connection, for protocol messages: its frames wait until a handler is set. */
  onPeer(framed: FramedSocket, hello: PeerHello, remote: string): void;
  /** A connection that did not become a peer (refused, timed out, broke, failed TLS), for the log. */
  onRefused?(remote: string, reason: string): void;
}

/** A listening socket that admits peers through the handshake. */
export interface PeerListener {
  /** The host it was asked to listen on. */
  readonly host: string;
  /** The bound port (the one chosen when 0 was asked). */
  readonly port: number;
  /** Stops accepting and destroys connections still in handshake; admitted peers are their owners' to close. */
  close(): Promise<void>;
}

/**
 * Listens for peers on host:port; each connection runs the server side of the handshake, and an
 * admitted one goes to onPeer.
 * @throws ConfigError ('tls') for a non-loopback host without TLS and without `insecure`;
 * ConfigError naming host:port when it cannot listen there (port in use, address not of this host).
 */
export async function listenPeers(o: ListenOptions): Promise<PeerListener> {
  assert(o.token.length > 0, 'listenPeers needs a cluster token');
  if (o.tls === null && !o.insecure && !isLoopbackHost(o.host))
    throw new ConfigError(
      'tls',
      `refusing to listen on ${o.host} without TLS: it is not a loopback address, and anyone on the network could read the cluster's traffic and take over a connection after its handshake; give certificates (--tls-cert, --tls-key, --tls-ca) or pass --insecure`,
    );
  const inHandshake = new Map<string, net.Socket>();
  const server =
    o.tls === null
      ? net.createServer((socket) => serveHandshake(socket, o, inHandshake))
      : tls.createServer({ ...serverTlsOptions(o.tls), handshakeTimeout: o.handshakeTimeoutMs }, (socket) => serveHandshake(socket, o, inHandshake));
  server.prependListener('connection', (raw: net.Socket) => track(raw, o, inHandshake)); // before TLS or the handshake see it
  if (server instanceof tls.Server)
    server.on('tlsClientError', (err, socket) => {
      // A certificate the CA did not sign: the socket is destroyed without a word, its error says only "socket hang up".
      const why = socket.authorizationError ? `the client's certificate is not accepted (${String(socket.authorizationError)})` : tlsReason(err);
      o.onRefused?.(remoteOf(socket), `TLS handshake failed: ${why}`);
    });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new ConfigError(formatAddress(o.host, o.port), `cannot listen: ${err.message}`)));
    server.listen(o.port, o.host, () => resolve());
  });
  // Errors after listening are failed accepts (too many open files, ...): Node keeps listening.
  server.on('error', () => {});
  const port = (server.address() as net.AddressInfo).port;
  return {
    host: o.host,
    port,
    close: async () => {
      server.close();
      const closing = [...inHandshake.values()].map((s) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve()))));
      for (const s of inHandshake.values()) s.destroy();
      await Promise.all(closing);
    },
  };
}

/** Keeps an accepted connection in `inHandshake` until it is handed over or closes; beyond MAX_HANDSHAKES it is closed at once. */
function track(raw: net.Socket, o: ListenOptions, inHandshake: Map<string, net.Socket>): void {
  const remote = remoteOf(raw);
  if (inHandshake.size >= MAX_HANDSHAKES) {
    raw.destroy();
    o.onRefused?.(remote, `${MAX_HANDSHAKES} connections are in handshake already`);
    return;
  }
  inHandshake.set(remote, raw);
  raw.once('close', () => {
    if (inHandshake.get(remote) === raw) inHandshake.delete(remote);
  });
}

/** The server's side of one connection: challenge, check the hello, welcome (and hand over) or refuse. */
function serveHandshake(socket: net.Socket, o: ListenOptions, inHandshake: Map<string, net.Socket>): void {
  if (socket.destroyed) return; // over MAX_HANDSHAKES
  const framed = framedSocket(socket, { maxFrameBytes: HANDSHAKE_MAX_FRAME_BYTES });
  const remote = framed.remote;
  let over = false;
  const refuse = (reason: string, tell: boolean): void => {
    if (over) return;
    over = true;
    timer.cancel();
    o.onRefused?.(remote, reason);
    if (tell) refuseAndEnd(framed, reason);
    else framed.close();
  };
  const timer = wallTimer(o.handshakeTimeoutMs, () => refuse('handshake timeout', false));
  framed.onClose((err) => refuse(`the connection closed during the handshake: ${err === null ? 'closed' : err.message}`, false));
  const nonce = newNonce();
  framed.write(encodeHandshake({ type: 'challenge', magic: JOIN_MAGIC, ...OURS, nonce }));
  framed.onFrame((frame) => {
    let m: ReturnType<typeof readHandshake>;
    try {
      m = readHandshake(frame, ['hello', 'refused']);
    } catch (err) {
      return refuse(`not a Weir handshake: ${errorMessage(err)}`, false);
    }
    if (m.type === 'refused') return refuse(`the client refused the connection: ${String(m.reason)}`, false);
    const mismatch = versionMismatch(m, OURS);
    if (mismatch !== null) return refuse(mismatch, true);
    let hello: Hello;
    try {
      hello = checkHandshake(m, 'hello');
    } catch (err) {
      return refuse(`malformed hello: ${errorMessage(err)}`, true);
    }
    if (!proofMatches(clientProof(o.token, nonce), hello.proof)) return refuse('authentication failed: wrong cluster token', true);
    const peer: PeerHello = {
      joinVersion: hello.joinVersion,
      protocolVersion: hello.protocolVersion,
      role: hello.role,
      weirVersion: hello.weirVersion,
      node: hello.node,
      body: hello.body,
    };
    let decision: ReturnType<ListenOptions['admit']>;
    try {
      decision = o.admit(peer, remote);
    } catch (err) {
      return refuse(`admission failed: ${errorMessage(err)}`, true); // a bug of the caller's must not take the listener down
    }
    if ('refuse' in decision) return refuse(decision.refuse, true);
    framed.write(encodeHandshake({ type: 'welcome', proof: serverProof(o.token, hello.nonce), body: decision.welcome }));
    over = true;
    timer.cancel();
    inHandshake.delete(remote);
    o.onPeer(handOver(framed, o.maxFrameBytes), peer, remote);
  });
}
