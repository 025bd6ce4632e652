/**
 * The fixed port of the web server (dashboard, REST API, metrics) of `weir run` and `weir demo`:
 * `--web-port <port>`, else `WEIR_WEB_PORT`, else an ephemeral port. The port is bound before the
 * job starts, so a port that is taken is a usage error naming the port and where it came from,
 * not a job that runs without its dashboard.
 */
import { InvalidArgumentError } from 'commander';
import { openWebListener, type WebListener, WebPortError } from '../web/listener.ts';
import { UsageError } from './exit.ts';

export const WEB_PORT_ENV = 'WEIR_WEB_PORT';

/** A port asked for, and where: the flag or the environment variable. */
export interface WebPortChoice {
  readonly port: number;
  /** How the user named it, for messages: `--web-port 8081` or `WEIR_WEB_PORT=8081`. */
  readonly named: string;
  /** What to leave out for an ephemeral port. */
  readonly option: string;
}

const PORT_RULE = 'must be an integer from 1 to 65535';

/** The port of `text`, or null when it is not one. */
export function parsePort(text: string): number | null {
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 1 && n <= 65535 ? n : null;
}

/** commander's parser of `--web-port`: an invalid value is a usage error (exit 2) naming the flag. */
export function portArgument(value: string): number {
  const port = parsePort(value);
  if (port === null) throw new InvalidArgumentError(PORT_RULE);
  return port;
}

/** The port the flag or, without it, the environment asks for; null: neither (an ephemeral port). */
export function webPortChoice(flag: number | undefined, env: NodeJS.ProcessEnv = process.env): WebPortChoice | null {
  if (flag !== undefined) return { port: flag, named: `--web-port ${flag}`, option: '--web-port' };
  const raw = env[WEB_PORT_ENV];
  if (raw === undefined || raw.trim() === '') return null;
  const port = parsePort(raw);
  if (port === null) throw new UsageError(`${WEB_PORT_ENV}: ${PORT_RULE}, got '${raw}'`);
  return { port, named: `${WEB_PORT_ENV}=${port}`, option: WEB_PORT_ENV };
}

/**
 * Binds the chosen port now on `host` (default 127.0.0.1; with a host but no port, an ephemeral
 * one), or null when neither was chosen; a port taken or not allowed, or a host that is not this
 * one's, is a UsageError.
 */
export async function bindWebPort(choice: WebPortChoice | null, host?: string): Promise<WebListener | null> {
  if (choice === null && host === undefined) return null;
  const named = [choice?.named, host === undefined ? undefined : `--web-host ${host}`].filter((n) => n !== undefined).join(' ');
  try {
    return await openWebListener(choice?.port ?? 0, host);
  } catch (err) {
    if (!(err instanceof WebPortError)) throw err;
    const instead =
      err.reason === 'EADDRNOTAVAIL'
        ? 'give an address of this host (0.0.0.0: every one)'
        : `choose another port, or leave ${choice?.option ?? '--web-port'} out for an ephemeral one`;
    throw new UsageError(`${named}: ${err.message}, so the dashboard cannot be served there; ${instead}`, { cause: err });
  }
}
