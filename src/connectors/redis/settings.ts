/**
 * Connection settings for the Redis connectors: from options, else REDIS_URL / REDIS_HOST,
 * REDIS_PORT, REDIS_USERNAME, REDIS_PASSWORD, else 127.0.0.1:6379 without auth. The password goes
 * to the client only: messages name the server and address, never the password, and settings never
 * go into a checkpoint (committables and split state carry keys, ids and entries only).
 */
import { ConnectorError, errorMessage } from '../../core/errors.ts';

/** Where and as whom a Redis connector connects; unset fields come from the environment. */
export interface RedisConnectionOptions {
  /** `redis://[user[:password]@]host[:port][/db]` (REDIS_URL); the fields below override its parts. */
  readonly url?: string;
  /** Host name or address (REDIS_HOST, else 127.0.0.1). */
  readonly host?: string;
  /** Port (REDIS_PORT, else 6379). */
  readonly port?: number;
  /** ACL user name (REDIS_USERNAME, else none). */
  readonly username?: string;
  /** Password (REDIS_PASSWORD, else none): never logged, never checkpointed. */
  readonly password?: string;
  /** Database number (default 0). */
  readonly db?: number;
  /** Milliseconds to wait for a connection before giving up (default 10000). */
  readonly connectTimeoutMs?: number;
}

/** Settings with every default filled in. */
export interface ResolvedRedisConnection {
  readonly host: string;
  readonly port: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly db: number;
  readonly connectTimeoutMs: number;
}

/**
 * Fills in the environment and defaults; `env` is a parameter so tests need not touch process.env.
 * @throws RangeError naming the bad value (never the password).
 */
export function resolveRedisConnection(options: RedisConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedRedisConnection {
  const urlText = options.url ?? env.REDIS_URL;
  let url: URL | null = null;
  if (urlText !== undefined) {
    try {
      url = new URL(urlText);
    } catch {
      throw new RangeError(`Redis url is not a URL (redis://host:port): ${redactUrl(urlText)}`);
    }
    if (url.protocol !== 'redis:') throw new RangeError(`Redis url must start with redis://, got ${url.protocol}`);
  }
  const portText = options.port ?? (url?.port ? url.port : env.REDIS_PORT);
  const port = portText === undefined ? 6379 : Number(portText);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new RangeError(`Redis port ${String(portText)} is not a port number`);
  const dbText = options.db ?? (url && url.pathname.length > 1 ? url.pathname.slice(1) : undefined);
  const db = dbText === undefined ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0) throw new RangeError(`Redis database ${String(dbText)} is not a number >= 0`);
  return {
    host: options.host ?? (url?.hostname || undefined) ?? env.REDIS_HOST ?? '127.0.0.1',
    port,
    username: options.username ?? (url?.username ? decodeURIComponent(url.username) : undefined) ?? env.REDIS_USERNAME,
    password: options.password ?? (url?.password ? decodeURIComponent(url.password) : undefined) ?? env.REDIS_PASSWORD,
    db,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
  };
}

function redactUrl(text: string): string {
  return text.replace(/\/\/([^@/]*)@/, '//***@');
}

/** The server as messages name it: address and database, never the password. */
export function describeRedis(c: ResolvedRedisConnection): string {
  return `Redis at ${c.host}:${c.port} (db ${c.db}${c.username ? `, user ${c.username}` : ''})`;
}

/** A ConnectorError for a failed operation on `c`, with the password redacted and no cause attached (a client error may carry its options). */
export function redisError(
  c: ResolvedRedisConnection,
  what: string,
  err: unknown,
  code: 'CONNECTOR_UNREACHABLE' | 'CONNECTOR_FAILED' = 'CONNECTOR_FAILED',
): ConnectorError {
  let detail = errorMessage(err);
  if (c.password) detail = detail.split(c.password).join('***');
  return new ConnectorError(code, describeRedis(c), `${what}: ${detail}`);
}
