/**
 * Connection settings for the NATS JetStream connectors: from options, else NATS_URL, NATS_USER,
 * NATS_PASSWORD, NATS_TOKEN, else nats://127.0.0.1:4222 without auth. Password and token go to the
 * client only: messages name the server's address, never credentials, and settings never go into a
 * checkpoint (split state holds stream, subject and sequence; committables hold messages and ids).
 */
import { ConnectorError, errorMessage } from '../../core/errors.ts';

/** Where and as whom a NATS connector connects; unset fields come from the environment. */
export interface NatsConnectionOptions {
  /** Server URL(s), `nats://host:port` (NATS_URL, comma-separated, else nats://127.0.0.1:4222). Credentials in a URL are moved into user/password. */
  readonly servers?: string | readonly string[];
  /** User name (NATS_USER, else none). */
  readonly user?: string;
  /** Password (NATS_PASSWORD, else none): never logged, never checkpointed. */
  readonly password?: string;
  /** Token (NATS_TOKEN, else none): never logged, never checkpointed. */
  readonly token?: string;
  /** Milliseconds to wait for a connection before giving up (default 10000). */
  readonly connectTimeoutMs?: number;
}

/** Settings with every default filled in; `servers` carry no credentials. */
export interface ResolvedNatsConnection {
  readonly servers: readonly string[];
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly token: string | undefined;
  readonly connectTimeoutMs: number;
}

/**
 * Fills in the environment and defaults; `env` is a parameter so tests need not touch process.env.
 * @throws RangeError naming a server that is not a nats:// URL (without its credentials).
 */
export function resolveNatsConnection(options: NatsConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedNatsConnection {
  const given = options.servers ?? env.NATS_URL?.split(',') ?? ['nats://127.0.0.1:4222'];
  const list = typeof given === 'string' ? [given] : [...given];
  let user = options.user ?? env.NATS_USER;
  let password = options.password ?? env.NATS_PASSWORD;
  const servers = list.map((text) => {
    let url: URL;
    try {
      url = new URL(text.includes('://') ? text.trim() : `nats://${text.trim()}`);
    } catch {
      throw new RangeError(`NATS server is not a URL (nats://host:port): ${text.replace(/\/\/([^@/]*)@/, '//***@')}`);
    }
    if (url.protocol !== 'nats:' && url.protocol !== 'tls:') throw new RangeError(`NATS server must be nats:// or tls://, got ${url.protocol}`);
    if (url.username) user ??= decodeURIComponent(url.username);
    if (url.password) password ??= decodeURIComponent(url.password);
    return `${url.protocol}//${url.hostname}:${url.port || '4222'}`;
  });
  if (servers.length === 0) throw new RangeError('NATS servers: none given');
  return { servers, user, password, token: options.token ?? env.NATS_TOKEN, connectTimeoutMs: options.connectTimeoutMs ?? 10_000 };
}

/** The server as messages name it: its addresses, never credentials. */
export function describeNats(c: ResolvedNatsConnection): string {
  return `NATS at ${c.servers.map((s) => s.replace(/^nats:\/\//, '')).join(',')}${c.user ? ` (user ${c.user})` : ''}`;
}

/** A ConnectorError for a failed operation on `c`, with password and token redacted and no cause attached. */
export function natsError(
  c: ResolvedNatsConnection,
  what: string,
  err: unknown,
  code: 'CONNECTOR_UNREACHABLE' | 'CONNECTOR_FAILED' = 'CONNECTOR_FAILED',
): ConnectorError {
  let detail = errorMessage(err);
  for (const secret of [c.password, c.token]) if (secret) detail = detail.split(secret).join('***');
  return new ConnectorError(code, describeNats(c), `${what}: ${detail}`);
}
