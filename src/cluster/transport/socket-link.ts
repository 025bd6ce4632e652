/**
 * A Link over a socket: each protocol message is one frame (framing.ts) holding the message's
 * bytes (message-codec.ts). Messages sent in one turn of the event loop leave in one write, as
 * portLink posts one batch per turn; TCP keeps them in order, so each direction is FIFO.
 */
import type { Link } from '../../runtime/network/link.ts';
import type { FramedSocket } from './framing.ts';
import { decodeMessage, encodeMessage, type ProtocolMessage } from './message-codec.ts';

/** A Link whose end can be observed (a socket closes on its own, unlike a port), with its byte counts. */
export interface SocketLink<Out, In> extends Link<Out, In> {
  /** The peer's address, `host:port`. */
  readonly remote: string;
  /**
   * THE handler of the end of the connection when this side did not end it (`Link.onClose`), called
   * once with why: ClusterError CLUSTER_CONNECTION_LOST, or a ProtocolError for bytes that are not a
   * message. Not called after this side's own close().
   */
  onClose(handler: (error: Error) => void): void;
  /** Bytes sent and received so far, framing included. */
  traffic(): { bytesSent: number; bytesReceived: number };
}

/**
 * The link over `framed` (a socket whose handshake is done). Frames that arrived before
 * onMessage wait for it. `send`'s transfer list is ignored: the bytes are copied into the socket.
 * Bytes that do not decode close the connection with the ProtocolError (onClose reports it).
 */
export function socketLink<Out extends ProtocolMessage, In extends ProtocolMessage>(framed: FramedSocket): SocketLink<Out, In> {
  let closed = false;
  return {
    remote: framed.remote,
    send: (message) => {
      if (!closed) framed.write(encodeMessage(message));
    },
    onMessage: (handler) => {
      framed.onFrame((frame) => {
        let message: In;
        try {
          message = decodeMessage<In>(frame);
        } catch (err) {
          framed.close(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        if (!closed) handler(message);
      });
    },
    close: () => {
      closed = true;
      framed.close();
    },
    onClose: (handler) =>
      framed.onClose((error) => {
        if (error !== null) handler(error);
      }),
    traffic: () => ({ bytesSent: framed.bytesSent, bytesReceived: framed.bytesReceived }),
  };
}
