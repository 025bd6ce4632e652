/**
 * Connection settings for PostgreSQL connectors: from options, else the standard PG* environment
 * variables, else libpq's defaults. The password is handed to the client only: it never appears in
 * messages (which name server, address, database and user) and never goes into a checkpoint.
 * Free of the client library's types, so the public declarations do not need them.
 */
import { userInfo } from 'node:os';
import { ConnectorError, errorMessage } from '../../core/errors.ts';

/** Where and as whom a PostgreSQL connector connects; what is left out comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD. */
export interface PostgresConnectionOptions {
  /** Host name, address or Unix socket directory (PGHOST, else localhost). */
  readonly host?: string;
  /** Port (PGPORT, else 5432). */
  readonly port?: number;
  /** Database (PGDATABASE, else the user name). */
  readonly database?: string;
  /** User (PGUSER, else the operating-system user). */
  readonly user?: string;
  /** Password (PGPASSWORD, else none): never logged, never checkpointed. */
  readonly password?: string;
  /** Milliseconds to wait for a connection before giving up (default 10000). */
  readonly connectTimeoutMs?: number;
}

/** Settings with every default filled in. */
export interface ResolvedConnection {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string | undefined;
  readonly connectTimeoutMs: number;
}

/** Fills in the environment and defaults; `env` is a parameter so tests need not touch process.env. */
export function resolveConnection(options: PostgresConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedConnection {
  const user = options.user ?? env.PGUSER ?? userInfo().username;
  const port = options.port ?? (env.PGPORT !== undefined ? Number(env.PGPORT) : 5432);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535) throw new RangeError(`PostgreSQL port ${String(options.port ?? env.PGPORT)} is not a port number`);
  return {
    host: options.host ?? env.PGHOST ?? 'localhost',
    port,
    database: options.database ?? env.PGDATABASE ?? user,
    user,
    password: options.password ?? env.PGPASSWORD,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
  };
}

/** The server as messages name it: address, database and user, never the password. */
export function describeServer(c: ResolvedConnection): string {
  return `PostgreSQL at ${c.host}:${c.port} (database ${c.database}, user ${c.user})`;
}

/** A message with every occurrence of the password replaced. */
export function redact(message: string, c: ResolvedConnection): string {
  return c.password ? message.split(c.password).join('***') : message;
}

/** A ConnectorError for a failed operation on `c`, with the password redacted and no cause attached (a client error may carry its settings). */
export function connectorError(
  c: ResolvedConnection,
  what: string,
  err: unknown,
  code: 'CONNECTOR_UNREACHABLE' | 'CONNECTOR_FAILED' = 'CONNECTOR_FAILED',
): ConnectorError {
  const pgCode = (err as { code?: unknown }).code;
  const detail = redact(errorMessage(err), c) + (typeof pgCode === 'string' ? ` [${pgCode}]` : '');
  return new ConnectorError(code, describeServer(c), `${what}: ${detail}`);
}

/** The SQLSTATE of a server error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
