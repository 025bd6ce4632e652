/**
 * The control endpoint of a job running under `weir run`: a small JSON-over-HTTP server on
 * 127.0.0.1 (loopback only, an ephemeral port) that `weir savepoint`, `weir stop` and
 * `weir cancel` talk to.
 *
 *   GET  /status                          -> {jobId, status, attempt, recordsIn, recordsOut, lastCheckpoint}
 *   GET  /advice                          -> the checkpoint advisor's Advice (as GET /jobs/:id/advice), for `weir advise <job>`
 *   POST /savepoint {dir}                 -> {jobId, location}            the job goes on
 *   POST /stop      {dir}                 -> {jobId, location}            stop-with-savepoint; answered once the job finished
 *   POST /cancel    {savepoint?, dir?}    -> {jobId, location?}           answered once the job is cancelled
 *
 * Errors are `{error}` with a 4xx (the request is wrong, or the job cannot do it now) or 500 (it
 * failed). POSTs must be `application/json` and the Host header must name the loopback address,
 * so a web page in a local browser can neither post to it nor reach it by DNS rebinding. Every
 * request must carry `Authorization: Bearer <token>`, the job's secret from its registry file
 * (readable by its owner only), or it gets 401: other local users cannot control the job.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Advice } from '../advisor/rules.ts';
import { sleep } from '../core/adapters.ts';
import { errorMessage } from '../core/errors.ts';
import type { JobClient } from '../index.ts';
import { isUrlPath } from '../storage/paths.ts';
import { resolveStorageLocation } from '../storage/location.ts';
import { checkHost, checkToken, readJsonBody } from '../web/http-util.ts';
import { HttpError } from '../web/rest/errors.ts';
import { oneLine } from './format.ts';

export interface ControlServer {
  /** `http://127.0.0.1:<port>` */
  readonly address: string;
  /** The savepoint a `POST /stop` ended the job with, once it completed. */
  readonly stoppedWithSavepoint: string | null;
  /** Whether a `POST /cancel` ended the job. */
  readonly cancelRequested: boolean;
  /** Stops listening, after the requests in progress got their answer (bounded wait). */
  close(): Promise<void>;
}

/** How long `close` waits for requests in progress (a stop answers once the job finished). */
const CLOSE_GRACE_MS = 5_000;

type Reply = { readonly status: number; readonly body: Record<string, unknown> };
type Route = (body: Record<string, unknown>) => Promise<Reply>;

/**
 * Starts listening for `client` on 127.0.0.1, port 0, accepting requests that carry `token`; resolves once it listens.
 * `advice` gives the job's checkpoint advice, or null when this process has none to give (no dashboard: no local job master).
 */
export async function startControlServer(client: JobClient, token: string, advice: () => Advice | null = () => null): Promise<ControlServer> {
  if (token.length === 0) throw new Error('a control endpoint needs a non-empty token');
  let stoppedWithSavepoint: string | null = null;
  let cancelRequested = false;
  const pending = new Set<Promise<void>>();

  const ensureRunning = (what: string): void => {
    const status = client.metrics().status;
    if (status === 'FINISHED' || status === 'FAILED' || status === 'CANCELED') {
      throw new HttpError(409, `job ${client.jobId} has ended (${status}); cannot ${what}`);
    }
  };

  const routes: Record<string, Route> = {
    'GET /status': async () => ({ status: 200, body: statusOf(client) }),
    'GET /advice': async () => {
      const answer = advice();
      if (answer === null) throw new HttpError(409, `job ${client.jobId} has no checkpoint figures in this weir run (no local job master)`);
      return { status: 200, body: { ...answer } };
    },
    'POST /savepoint': async (body) => {
      const dir = savepointDirOf(body);
      ensureRunning('take a savepoint');
      return { status: 200, body: { jobId: client.jobId, location: await engineCall(() => client.savepoint(dir)) } };
    },
    'POST /stop': async (body) => {
      const dir = savepointDirOf(body);
      ensureRunning('stop it with a savepoint');
      const location = await engineCall(() => client.stopWithSavepoint(dir));
      stoppedWithSavepoint = location;
      return { status: 200, body: { jobId: client.jobId, location } };
    },
    'POST /cancel': async (body) => {
      const withSavepoint = body.savepoint ?? false;
      if (typeof withSavepoint !== 'boolean') throw new HttpError(400, "'savepoint' must be true or false");
      if (!withSavepoint && body.dir !== undefined) throw new HttpError(400, "'dir' is for a savepoint: send savepoint: true with it");
      const dir = withSavepoint ? savepointDirOf(body) : null;
      ensureRunning('cancel it');
      const location = dir === null ? null : await engineCall(() => client.cancelWithSavepoint(dir));
      if (location === null) await engineCall(() => client.cancel());
      cancelRequested = true;
      return { status: 200, body: location === null ? { jobId: client.jobId } : { jobId: client.jobId, location } };
    },
  };

  const server = http.createServer((req, res) => {
    const done = handle(req, res, routes, { port: () => port, token }).catch(() => {});
    pending.add(done);
    void done.finally(() => pending.delete(done));
  });
  const port = await listen(server);
  const address = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | null = null;
  return {
    address,
    get stoppedWithSavepoint() {
      return stoppedWithSavepoint;
    },
    get cancelRequested() {
      return cancelRequested;
    },
    close: () => (closing ??= closeServer(server, pending)),
  };
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      // The job keeps the process alive, not its endpoint: `weir run`'s stall guard needs an empty event loop to notice a lost job.
      server.unref();
      resolve((server.address() as AddressInfo).port);
    });
  });
}

async function closeServer(server: http.Server, pending: ReadonlySet<Promise<void>>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.race([Promise.allSettled([...pending]), sleep(CLOSE_GRACE_MS)]);
  await Promise.race([closed, sleep(CLOSE_GRACE_MS)]);
  server.closeAllConnections();
}

async function handle(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  routes: Record<string, Route>,
  access: { port: () => number; token: string },
): Promise<void> {
  let reply: Reply;
  try {
    checkHost(req, access.port());
    checkToken(req, access.token);
    const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const route = routes[`${req.method} ${pathname}`];
    if (route === undefined) {
      const known = Object.keys(routes).some((r) => r.endsWith(` ${pathname}`));
      throw new HttpError(known ? 405 : 404, `no route ${req.method} ${pathname}; routes: ${Object.keys(routes).join(', ')}`);
    }
    const body = req.method === 'POST' ? await readJsonBody(req) : {};
    reply = await route(body);
  } catch (err) {
    reply = err instanceof HttpError ? { status: err.status, body: { error: err.message } } : { status: 500, body: { error: oneLine(errorMessage(err)) } };
  }
  const text = `${JSON.stringify(reply.body)}\n`;
  res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' });
  res.end(text);
}

/** The savepoint directory of a request: absolute (this process's cwd is not the caller's), or a storage URL (`s3://...`). */
function savepointDirOf(body: Record<string, unknown>): string {
  const dir = body.dir;
  if (typeof dir !== 'string' || dir.length === 0) throw new HttpError(400, "'dir' (the savepoint directory, an absolute path or a storage URL) is required");
  if (isUrlPath(dir)) return storageUrlOf(dir, 'dir');
  if (!path.isAbsolute(dir)) throw new HttpError(400, `'dir' must be an absolute path, got '${dir}'`);
  return path.normalize(dir);
}

/** A storage URL of a request, checked by its scheme's entry; a 400 naming `field` when it is not one Weir can write to. */
function storageUrlOf(dir: string, field: string): string {
  try {
    return resolveStorageLocation(dir, field);
  } catch (err) {
    throw new HttpError(400, errorMessage(err));
  }
}

/** Runs an engine call; its failure is a 500 whose message is the engine's, on one line. */
async function engineCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new HttpError(500, oneLine(errorMessage(err)));
  }
}

function statusOf(client: JobClient): Record<string, unknown> {
  const m = client.metrics();
  const c = m.lastCheckpoint;
  return {
    jobId: client.jobId,
    status: m.status,
    attempt: m.attempt,
    recordsIn: m.recordsIn,
    recordsOut: m.recordsOut,
    lastCheckpoint:
      c === null
        ? null
        : {
            checkpointId: c.checkpointId,
            kind: c.kind,
            triggeredAtMs: c.triggeredAtMs,
            durationMs: c.durationMs,
            persistedBytes: c.persistedBytes,
            location: c.location,
          },
  };
}
