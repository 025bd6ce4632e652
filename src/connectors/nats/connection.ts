/** Opening a NATS connection with resolved settings (see settings.ts), failing fast instead of reconnecting. */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ConnectorError } from '../../core/errors.ts';
import { natsError, type ResolvedNatsConnection } from './settings.ts';

/**
 * A connection that does not reconnect: when it closes (the server went away) `onClosed` gets a
 * ConnectorError and the subtask fails, so the job restarts from its checkpoint and reads or
 * commits again from positions and committables it knows are right.
 * @throws ConnectorError (CONNECTOR_UNREACHABLE) naming the server when it cannot connect.
 */
export async function connectNats(c: ResolvedNatsConnection, purpose: string, onClosed: (err: ConnectorError) => void): Promise<NatsLink> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: [...c.servers],
      user: c.user,
      pass: c.password,
      token: c.token,
      timeout: c.connectTimeoutMs,
      reconnect: false,
      name: `weir ${purpose}`,
    });
  } catch (err) {
    throw natsError(c, `cannot connect (${purpose})`, err, 'CONNECTOR_UNREACHABLE');
  }
  const link = {
    nc,
    closing: false,
    close(): void {
      link.closing = true;
      nc.close().catch(() => {});
    },
  };
  void nc.closed().then((err) => {
    if (!link.closing) onClosed(natsError(c, `connection of ${purpose} lost`, err ?? new Error('connection closed')));
  });
  return link;
}

/** An open connection and the way to close it on purpose (which raises no `onClosed`). */
export interface NatsLink {
  readonly nc: NatsConnection;
  close(): void;
}
