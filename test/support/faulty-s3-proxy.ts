/**
 * A fault-injecting HTTP proxy in front of the test S3 server: requests pass through unchanged
 * (the Host header too, so SigV4 signatures still verify) unless a rule matches, which answers 500
 * InternalError or 503 SlowDown, drops the connection after part of the request body (a lost
 * upload), never answers (a timeout), or passes the request on and answers 412 Precondition Failed
 * (what a server with conditional writes says to a retried create-only PUT whose first answer was
 * lost), answers 412 without passing it on (another writer's create-only PUT got there first), or
 * answers 404 (a HEAD that ran before another writer's PUT landed). A rule may let its first
 * matching requests pass (a cleanup cut short after its first delete). Each rule applies a given number of times, then the
 * request passes again; every request is recorded, so tests can say what was retried.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type S3Fault = 'error-500' | 'slowdown-503' | 'reset-mid-body' | 'hang' | 'forward-then-412' | 'precondition-412' | 'not-found-404';

export interface FaultRule {
  readonly method?: string;
  /** A part of the request's path and query (`/bucket/key?uploadId=...`) it must contain. */
  readonly pathContains?: string;
  readonly fault: S3Fault;
  /** How many matching requests get the fault; Infinity for all. */
  times: number;
  /** How many matching requests pass unharmed before the fault applies (0 when absent). */
  skip?: number;
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly fault: S3Fault | null;
}

export class FaultyS3Proxy {
  readonly seen: SeenRequest[] = [];
  private readonly rules: FaultRule[] = [];
  private readonly hung = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  /** A proxy on a free loopback port forwarding to `upstream` (`http://127.0.0.1:port`). */
  static async start(upstream: string): Promise<FaultyS3Proxy> {
    const target = new URL(upstream);
    let proxy: FaultyS3Proxy | null = null;
    const server = createServer((req, res) => proxy?.handle(req, res, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new FaultyS3Proxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  /** Adds a rule; the first rule that matches a request and has times left applies. */
  inject(rule: FaultRule): void {
    this.rules.push(rule);
  }

  /** Removes every rule: from now on everything passes. */
  heal(): void {
    this.rules.length = 0;
  }

  async stop(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private ruleFor(req: IncomingMessage): FaultRule | null {
    for (const rule of this.rules) {
      if (rule.times <= 0) continue;
      if (rule.method !== undefined && rule.method !== req.method) continue;
      if (rule.pathContains !== undefined && !(req.url ?? '').includes(rule.pathContains)) continue;
      if ((rule.skip ?? 0) > 0) {
        rule.skip = (rule.skip ?? 0) - 1;
        return null;
      }
      rule.times--;
      return rule;
    }
    return null;
  }

  private handle(req: IncomingMessage, res: ServerResponse, target: URL): void {
    const rule = this.ruleFor(req);
    this.seen.push({ method: req.method ?? '', url: req.url ?? '', fault: rule?.fault ?? null });
    const canned = rule === null ? undefined : CANNED[rule.fault];
    if (canned !== undefined) {
      drainThen(req, () => s3ErrorResponse(res, ...canned));
      return;
    }
    switch (rule?.fault) {
      case 'reset-mid-body':
        // The first bytes of the body arrive, then the connection is gone: a lost upload.
        req.once('data', () => req.socket.destroy());
        req.on('end', () => req.socket.destroy());
        break;
      case 'forward-then-412':
        forward(req, res, target, () => s3ErrorResponse(res, ...PRECONDITION_FAILED));
        break;
      case 'hang':
        this.hung.add(res);
        req.resume();
        break;
      default:
        forward(req, res, target);
    }
  }
}

const PRECONDITION_FAILED: [number, string, string] = [412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'];

/** The faults answered with an S3 error at once: status, code, message. */
const CANNED: Partial<Record<S3Fault, [number, string, string]>> = {
  'error-500': [500, 'InternalError', 'We encountered an internal error. Please try again.'],
  'slowdown-503': [503, 'SlowDown', 'Please reduce your request rate.'],
  'precondition-412': PRECONDITION_FAILED,
  'not-found-404': [404, 'NoSuchKey', 'The specified key does not exist.'],
};

function drainThen(req: IncomingMessage, then: () => void): void {
  req.resume();
  req.on('end', then);
}

function s3ErrorResponse(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>proxy</RequestId></Error>`);
}

function forward(req: IncomingMessage, res: ServerResponse, target: URL, answer?: () => void): void {
  const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
    if (answer !== undefined) {
      up.resume();
      up.on('end', answer);
      return;
    }
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
}
