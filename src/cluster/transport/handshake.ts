/**
 * The connection handshake of the cluster: before any protocol message, both ends prove they know
 * the cluster token (cluster-token.ts) without sending it, check that they speak the same
 * protocol, and exchange plain data (a task manager's registration, the job master's answer).
 *
 *   server -> client  challenge {magic 'WEIR-JOIN', joinVersion, protocolVersion, nonce}
 *   client -> server  hello {versions, role, weirVersion, node, body, nonce, proof of the token over the server's nonce}
 *   server -> client  welcome {proof of the token over the client's nonce, body}  or  refused {reason}
 *
 * Either side that refuses says why in a `refused` frame before closing, so both ends can log the
 * reason. After a welcome the same FramedSocket carries protocol messages, not a byte lost: frames
 * that follow the handshake in the same chunk wait until the new owner sets a handler.
 *
 * The client side is here (dialPeer), the server side in peer-listener.ts (listenPeers, also
 * exported from here).
 *
 * The handshake authenticates the peer; it does not protect what follows. Beyond loopback only TLS
 * (tls-settings.ts) stops someone on the path from reading the traffic or taking a connection over
 * after its handshake: listenPeers refuses a non-loopback address without TLS unless `insecure`.
 */
import { wallTimer } from '../../core/adapters.ts';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { assert } from '../../core/assert.ts';
import { ClusterError, ProtocolError } from '../../core/errors.ts';
import { formatAddress } from './address.ts';
import { type FramedSocket, framedSocket } from './framing.ts';
import { handOver, OURS, refuseAndEnd, tlsReason } from './handshake-common.ts';
import {
  checkHandshake,
  clientProof,
  encodeHandshake,
  HANDSHAKE_MAX_FRAME_BYTES,
  JOIN_MAGIC,
  newNonce,
  type PeerRole,
  proofMatches,
  readHandshake,
  serverProof,
  versionMismatch,
} from './handshake-messages.ts';
import { clientTlsOptions, type TlsSettings } from './tls-settings.ts';

export type { PeerHello, PeerRole } from './handshake-messages.ts';
export { type ListenOptions, type ListenSettings, listenPeers, type PeerListener } from './peer-listener.ts';

export interface DialOptions {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  /** Mutual TLS with the cluster CA, or null for plain TCP. */
  readonly tls: TlsSettings | null;
  readonly role: PeerRole;
  /** Plain data for the server's admit() (registration fields). */
  readonly body: Record<string, unknown>;
  readonly weirVersion: string;
  /** For connecting, TLS and the handshake together. */
  readonly timeoutMs: number;
  /** The largest protocol frame accepted after the handshake (default DEFAULT_MAX_FRAME_BYTES). */
  readonly maxFrameBytes?: number;
}

/** A connection whose handshake succeeded: the socket (no frame handler set yet) and the server's answer. */
export interface DialedPeer {
  readonly framed: FramedSocket;
  readonly welcome: Record<string, unknown>;
}

/**
 * Connects to a listener (listenPeers) and runs the client side of the handshake.
 * @throws ClusterError CLUSTER_UNREACHABLE naming host:port and the cause when no connection is
 * made (refused, unreachable, unknown host, no handshake within timeoutMs, a peer that does not
 * speak the handshake); CLUSTER_REFUSED with the server's reason when it refused, when the server
 * did not prove it knows the token, for another join or protocol version, or when TLS failed.
 */
export function dialPeer(o: DialOptions): Promise<DialedPeer> {
  assert(o.token.length > 0, 'dialPeer needs a cluster token');
  const address = formatAddress(o.host, o.port);
  return new Promise((resolve, reject) => {
    const socket = o.tls === null ? net.connect({ host: o.host, port: o.port }) : tls.connect({ host: o.host, port: o.port, ...clientTlsOptions(o.tls) });
    let framed: FramedSocket | null = null;
    let settled = false;
    const settle = (): void => {
      settled = true;
      timer.cancel();
      socket.off('error', fail);
    };
    const fail = (err: Error, tell?: string): void => {
      if (settled) return;
      settle();
      if (framed !== null && tell !== undefined) refuseAndEnd(framed, tell);
      else if (framed !== null) framed.close();
      else socket.destroy();
      reject(dialFailure(address, err, o.tls !== null && (framed === null || framed.framesReceived === 0)));
    };
    const timer = wallTimer(o.timeoutMs, () => {
      const stage = framed === null ? 'no connection' : 'connected, but no handshake';
      fail(new ClusterError('CLUSTER_UNREACHABLE', address, `${stage} within ${o.timeoutMs} ms`));
    });
    socket.on('error', fail); // first, so a failure is judged by the socket's own error
    socket.once(o.tls === null ? 'connect' : 'secureConnect', () => {
      const connected = framedSocket(socket, { name: address, maxFrameBytes: HANDSHAKE_MAX_FRAME_BYTES });
      framed = connected;
      connected.onClose((err) => fail(err ?? new Error('closed')));
      runClient(connected, o, address, fail, (body) => {
        settle();
        resolve({ framed: handOver(connected, o.maxFrameBytes), welcome: body });
      });
    });
  });
}

/** The client's side once connected: answer the challenge, then take the welcome or the refusal. */
function runClient(
  framed: FramedSocket,
  o: DialOptions,
  address: string,
  fail: (err: Error, tell?: string) => void,
  done: (welcome: Record<string, unknown>) => void,
): void {
  const nonce = newNonce();
  let challenged = false;
  framed.onFrame((frame) => {
    try {
      const m = readHandshake(frame, challenged ? ['welcome', 'refused'] : ['challenge']);
      if (m.type === 'challenge') {
        if (m.magic !== JOIN_MAGIC) throw new ProtocolError('body', null, null, `the challenge is not a Weir join (magic ${JSON.stringify(m.magic)})`);
        const mismatch = versionMismatch(OURS, m);
        if (mismatch !== null) return fail(new ClusterError('CLUSTER_REFUSED', address, mismatch), mismatch);
        const challenge = checkHandshake(m, 'challenge');
        challenged = true;
        framed.write(
          encodeHandshake({
            type: 'hello',
            ...OURS,
            role: o.role,
            weirVersion: o.weirVersion,
            node: process.version,
            body: o.body,
            nonce,
            proof: clientProof(o.token, challenge.nonce),
          }),
        );
      } else if (m.type === 'refused') {
        fail(new ClusterError('CLUSTER_REFUSED', address, `refused the connection: ${checkHandshake(m, 'refused').reason}`));
      } else {
        const welcome = checkHandshake(m, 'welcome');
        if (!proofMatches(serverProof(o.token, nonce), welcome.proof)) {
          const reason = 'did not prove it knows the cluster token: it belongs to another cluster, or its token differs';
          return fail(new ClusterError('CLUSTER_REFUSED', address, reason), 'authentication failed: the server did not prove it knows the cluster token');
        }
        done(welcome.body);
      }
    } catch (err) {
      fail(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

/**
 * The ClusterError for a connection that failed before or during the handshake, by what failed.
 * @param tlsBeforeChallenge whether it was a TLS connection that ended before the server's first
 * frame: a TLS 1.3 server that does not accept the client's certificate just closes.
 */
function dialFailure(address: string, err: Error, tlsBeforeChallenge: boolean): ClusterError {
  if (err instanceof ClusterError && err.code !== 'CLUSTER_CONNECTION_LOST') return err;
  const peerClosed = err instanceof ClusterError && err.cause === undefined;
  const cause = err instanceof ClusterError && err.cause instanceof Error ? err.cause : err;
  const { code, syscall } = cause as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && isTlsCode(code))
    return new ClusterError('CLUSTER_REFUSED', address, `TLS handshake failed: ${tlsReason(cause)} (are both certificates signed by the cluster CA?)`, {
      cause,
    });
  if (cause instanceof ProtocolError)
    return new ClusterError('CLUSTER_UNREACHABLE', address, `does not answer as a Weir job master or task manager: ${cause.message}`, { cause });
  if (syscall === 'connect' || syscall === 'getaddrinfo')
    return new ClusterError('CLUSTER_UNREACHABLE', address, `cannot connect: ${cause.message}`, { cause });
  if (tlsBeforeChallenge)
    return new ClusterError(
      'CLUSTER_REFUSED',
      address,
      `closed the connection after the TLS handshake, before its challenge: it does not accept this process's certificate (not signed by the cluster CA?), or it is not a Weir peer (${peerClosed ? 'closed by the peer' : cause.message})`,
      { cause },
    );
  if (peerClosed)
    return new ClusterError('CLUSTER_UNREACHABLE', address, 'the peer closed the connection during the handshake (is it a Weir job master or task manager?)', {
      cause,
    });
  return new ClusterError('CLUSTER_UNREACHABLE', address, `the connection closed during the handshake: ${cause.message}`, { cause });
}

/** Codes of OpenSSL alerts and certificate checks: the other side's certificate, or ours, was not accepted. */
function isTlsCode(code: string): boolean {
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code);
}
