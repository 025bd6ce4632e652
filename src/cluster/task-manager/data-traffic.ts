/**
 * What a task manager sent and received on its data links to other task managers, over its whole
 * life (never reset per attempt). Transport-agnostic: bytes are the frames' payload (`byteLength`
 * of each encoded element), not what a transport adds around a message; credits carry no payload
 * and count as messages only.
 */
import type { DataMessage, DataTrafficFigures } from '../transport/protocol.ts';

export const NO_DATA_TRAFFIC: DataTrafficFigures = { bytesSent: 0, bytesReceived: 0, messagesSent: 0, messagesReceived: 0 };

/** The running totals of one task manager. */
export class DataTraffic {
  private bytesSent = 0;
  private bytesReceived = 0;
  private messagesSent = 0;
  private messagesReceived = 0;

  /** Before the send: a frame's buffer is transferred (emptied) by some transports. */
  sent(m: DataMessage): void {
    this.messagesSent++;
    if (m.type === 'frame') this.bytesSent += m.frame.byteLength;
  }

  received(m: DataMessage): void {
    this.messagesReceived++;
    if (m.type === 'frame') this.bytesReceived += m.frame.byteLength;
  }

  get figures(): DataTrafficFigures {
    return { bytesSent: this.bytesSent, bytesReceived: this.bytesReceived, messagesSent: this.messagesSent, messagesReceived: this.messagesReceived };
  }
}
