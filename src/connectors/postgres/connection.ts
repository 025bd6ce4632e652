/** Opening a client of the `pg` library with resolved settings (see settings.ts). */
import pg from 'pg';
import type { ConnectorError } from '../../core/errors.ts';
import { connectorError, type ResolvedConnection } from './settings.ts';

/**
 * An open client. Errors the client raises between queries (the server went away) go to
 * `onError`, because an 'error' event nobody listens to would end the process.
 */
export async function connect(
  c: ResolvedConnection,
  purpose: string,
  onError: (err: ConnectorError) => void,
  mode: { readonly replication?: boolean } = {},
): Promise<pg.Client> {
  // `replication: 'database'` opens a walsender connection (logical replication commands); the
  // client supports it, its type declarations do not list it.
  const replication = mode.replication === true ? { replication: 'database' } : {};
  const client = new pg.Client({
    ...replication,
    host: c.host,
    port: c.port,
    database: c.database,
    user: c.user,
    password: c.password,
    connectionTimeoutMillis: c.connectTimeoutMs,
    application_name: `weir ${purpose}`.slice(0, 63),
  });
  client.on('error', (err) => onError(connectorError(c, `connection of ${purpose} lost`, err)));
  try {
    await client.connect();
  } catch (err) {
    client.end().catch(() => {});
    throw connectorError(c, `cannot connect (${purpose})`, err, 'CONNECTOR_UNREACHABLE');
  }
  return client;
}
