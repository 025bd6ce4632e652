/**
 * What both ends of the handshake (handshake.ts, peer-listener.ts) share: the versions they
 * compare, handing the socket over after a welcome, ending it after a refusal, naming the peer.
 */
import { wallTimer } from '../../core/adapters.ts';
import type * as net from 'node:net';
import { formatAddress } from './address.ts';
import { DEFAULT_MAX_FRAME_BYTES, type FramedSocket } from './framing.ts';
import { encodeHandshake, JOIN_VERSION } from './handshake-messages.ts';
import { PROTOCOL_VERSION } from './message-codec.ts';

/** The versions this build speaks, as both sides compare them. */
export const OURS = { joinVersion: JOIN_VERSION, protocolVersion: PROTOCOL_VERSION } as const;
/** How long a side that refused waits for the peer to close before it closes the connection itself. */
const REFUSED_LINGER_MS = 5_000;

/** The socket as its new owner gets it: protocol frame limit, no handlers (frames queue until one is set). */
export function handOver(framed: FramedSocket, maxFrameBytes: number | undefined): FramedSocket {
  framed.maxFrameBytes = maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  framed.onFrame(null);
  framed.onClose(null);
  return framed;
}

/** Says why in a `refused` frame, then ends the connection: the peer closes on it, or we do after a while. */
export function refuseAndEnd(framed: FramedSocket, reason: string): void {
  framed.write(encodeHandshake({ type: 'refused', reason }));
  framed.onFrame(() => {}); // keep reading, so the peer's close is seen
  framed.onClose(null);
  framed.end();
  wallTimer(REFUSED_LINGER_MS, () => framed.close(), { unref: true });
}

/** OpenSSL's reason alone (`peer did not return a certificate`), without the error queue dump its message carries. */
export function tlsReason(err: Error): string {
  const { reason } = err as { reason?: unknown };
  return typeof reason === 'string' && reason.length > 0 ? reason : err.message;
}

/** The peer's address, `host:port`, of a socket (also one that failed before a FramedSocket was made of it). */
export function remoteOf(socket: net.Socket): string {
  const { remoteAddress, remotePort } = socket;
  return remoteAddress !== undefined && remotePort !== undefined ? formatAddress(remoteAddress, remotePort) : 'unknown peer';
}
