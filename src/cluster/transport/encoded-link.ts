/**
 * In-memory links that carry bytes (the simulator's and in-memory task managers' transport): kept
 * apart from link.ts so a worker thread answers its first heartbeat before msgpackr loads.
 */
import type { Scheduler } from '../../core/time.ts';
import { inMemoryLinkPair, type InMemoryLinkEnd } from '../../runtime/network/link.ts';
import { decodeMessage, encodeMessage, type ProtocolMessage } from './message-codec.ts';

/**
 * Two ends of an in-memory link that carries bytes, as a socket would: the sender encodes each
 * message at send time (message-codec.ts), the receiver decodes it on delivery, so an object the
 * sender changes after sending cannot reach the receiver, and a field that does not survive
 * encoding arrives as the TCP link would deliver it. The scheduling is inMemoryLinkPair's: one
 * delivery per send, FIFO per direction. `transfer` lists are not needed (the bytes are a copy).
 * A connection that ends drops what is in flight, as a reset TCP connection does (inMemoryLinkPair).
 */
export function inMemoryEncodedLinkPair<A extends ProtocolMessage, B extends ProtocolMessage>(
  scheduler: Scheduler,
): [InMemoryLinkEnd<A, B>, InMemoryLinkEnd<B, A>] {
  const [a, b] = inMemoryLinkPair<Uint8Array, Uint8Array>(scheduler);
  return [encodedEnd<A, B>(a), encodedEnd<B, A>(b)];
}

function encodedEnd<Out extends ProtocolMessage, In extends ProtocolMessage>(bytes: InMemoryLinkEnd<Uint8Array, Uint8Array>): InMemoryLinkEnd<Out, In> {
  return {
    send: (message) => bytes.send(encodeMessage(message)),
    onMessage: (handler) => bytes.onMessage((encoded) => handler(decodeMessage<In>(encoded))),
    close: () => bytes.close(),
    onClose: (handler) => bytes.onClose(handler),
    end: (error) => bytes.end(error),
    reset: (error) => bytes.reset(error),
  };
}
