/**
 * The web server's port, bound before a job runs (`weir run --web-port`, `--web-host`): a port
 * that is taken is known at once, and until a job's web server takes the port over (a standby
 * waits for the lease, a leader restores) it answers the health routes (`/healthz`, `/readyz`,
 * `/ha`) and 503 to everything else. Bound on 127.0.0.1 unless a host is given (a Kubernetes
 * probe dials the pod's address); on loopback every request must name the loopback address in its
 * Host header (no DNS rebinding), elsewhere the address was chosen to be reached by other hosts.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkHost, sendJson } from './http-util.ts';
import { healthAnswer, type HaRole } from './health.ts';
import { HttpError } from './rest/errors.ts';

/** A request handler of the port; `pathname` without trailing slashes. */
export type WebHandler = (req: http.IncomingMessage, res: http.ServerResponse, pathname: string) => Promise<void>;

/** A port bound for a web server. */
export interface WebListener {
  readonly port: number;
  /** The address it is bound on (`127.0.0.1` unless `--web-host`). */
  readonly host: string;
  /** `http://<host>:<port>`. */
  readonly address: string;
  /** What this process is for high availability (`/readyz`, `/ha`); `single` until told. */
  role: HaRole;
  /** @internal the bound server */
  readonly server: http.Server;
  /** Hands every request from now on to `handler` (the job's web server); the Host check and the path come first. */
  serve(handler: WebHandler): void;
  /** Stops listening (idempotent); a web server started on it closes it itself. */
  close(): Promise<void>;
}

/** Why a web server could not listen on the port it was given: `EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL` or `INVALID`. */
export class WebPortError extends Error {
  constructor(
    readonly port: number,
    readonly reason: 'EADDRINUSE' | 'EACCES' | 'EADDRNOTAVAIL' | 'INVALID',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WebPortError';
  }
}

/** The loopback address the web server binds by default. */
export const LOOPBACK = '127.0.0.1';

/** `host` as it stands in a URL (an IPv6 address in brackets). */
export const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/** Before a job's web server takes over: the health routes, and 503 for the rest. */
function beforeTheJob(listener: WebListener): WebHandler {
  return async (_req, res, pathname) => {
    const health = healthAnswer(pathname, listener.role, null);
    if (health !== null) return sendJson(res, health.status, health.body);
    const why = listener.role.role === 'standby' ? `a standby of job '${listener.role.job}' (led by ${listener.role.leader})` : 'starting';
    sendJson(res, 503, { errors: [`no job runs in this process yet: it is ${why}; see GET /ha`] });
  };
}

/**
 * Binds `port` on `host` (0: an ephemeral port; default 127.0.0.1); rejects with a WebPortError
 * when it is taken, not allowed, not an address of this host, or not a port.
 */
export async function openWebListener(port = 0, host = LOOPBACK): Promise<WebListener> {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new WebPortError(port, 'INVALID', `web port ${port} is not a port number (an integer from 1 to 65535, or 0 for an ephemeral port)`);
  }
  const server = http.createServer();
  const where = `port ${port} on ${host}`;
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.unref(); // the job keeps the process alive, not its dashboard
      resolve((server.address() as AddressInfo).port);
    });
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') throw new WebPortError(port, 'EADDRINUSE', `${where} is already in use`, { cause: err });
    if (err.code === 'EACCES') throw new WebPortError(port, 'EACCES', `${where} is not allowed for this user`, { cause: err });
    if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND')
      throw new WebPortError(port, 'EADDRNOTAVAIL', `${host} is not an address of this host`, { cause: err });
    throw err;
  });
  const loopback = host === LOOPBACK || host === 'localhost';
  let closing: Promise<void> | null = null;
  const listener: WebListener = {
    port: bound,
    host,
    address: `http://${urlHost(host)}:${bound}`,
    role: { role: 'single' },
    server,
    serve: (h) => void (handler = h),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
  let handler = beforeTheJob(listener);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    try {
      if (loopback) checkHost(req, bound);
    } catch (err) {
      if (err instanceof HttpError) return sendJson(res, err.status, { errors: [err.message] });
      throw err;
    }
    const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname.replace(/\/+$/, '') || '/';
    void handler(req, res, pathname).catch(() => res.destroy());
  });
  return listener;
}
