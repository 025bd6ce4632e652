/** Opening an ioredis client with resolved settings (see settings.ts), failing fast instead of reconnecting. */
import { Redis } from 'ioredis';
import type { ConnectorError } from '../../core/errors.ts';
import { type ResolvedRedisConnection, redisError } from './settings.ts';

/**
 * A connected client that never reconnects or queues commands while disconnected: a lost
 * connection fails the subtask (the job restarts from its checkpoint and connects anew), which
 * keeps positions and commits simple. Errors between commands go to `onError`.
 * @throws ConnectorError (CONNECTOR_UNREACHABLE) naming the server and address when it cannot connect.
 */
export async function connectRedis(c: ResolvedRedisConnection, purpose: string, onError: (err: ConnectorError) => void): Promise<Redis> {
  const client = new Redis({
    host: c.host,
    port: c.port,
    username: c.username,
    password: c.password,
    db: c.db,
    connectionName: `weir-${purpose}`.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 60),
    connectTimeout: c.connectTimeoutMs,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    autoResendUnfulfilledCommands: false,
  });
  let connected = false;
  // The reason a connection attempt fails (WRONGPASS, NOAUTH, ECONNREFUSED) arrives as an 'error'
  // event; connect() then rejects with only "Connection is closed".
  let connectFailure: unknown = null;
  client.on('error', (err: unknown) => {
    if (connected) onError(redisError(c, `connection of ${purpose} lost`, err));
    else connectFailure ??= err;
  });
  client.on('end', () => {
    if (connected) onError(redisError(c, `connection of ${purpose} lost`, new Error('connection closed')));
  });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw redisError(c, `cannot connect (${purpose})`, connectFailure ?? err, 'CONNECTOR_UNREACHABLE');
  }
  connected = true;
  return client;
}

/** Closes a client without waiting and without raising 'connection lost'. */
export function closeRedis(client: Redis): void {
  client.removeAllListeners('end');
  client.removeAllListeners('error');
  client.on('error', () => {});
  client.disconnect();
}
