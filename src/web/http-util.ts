/** Small HTTP helpers of the web server and the control endpoint: the loopback Host check, the bearer token, JSON bodies and replies. */
import { timingSafeEqual } from 'node:crypto';
import type * as http from 'node:http';
import { HttpError } from './rest/errors.ts';

/** A request's body larger than this is refused: the routes take a few short fields. */
const BODY_BYTES_MAX = 64 * 1024;

/** Only requests addressed to the loopback name of this port: a rebinding DNS name is refused. */
export function checkHost(req: http.IncomingMessage, port: number): void {
  const host = req.headers.host ?? '';
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) throw new HttpError(403, `Host must be 127.0.0.1:${port}, got '${host}'`);
}

/** Only requests with the job's control token; compared in constant time. */
export function checkToken(req: http.IncomingMessage, token: string): void {
  const header = req.headers.authorization;
  if (header === undefined)
    throw new HttpError(401, "missing 'Authorization: Bearer <token>' (the job's control token, which weir reads from its registry file)");
  const given = Buffer.from(/^Bearer (\S+)$/.exec(header)?.[1] ?? '', 'utf8');
  const expected = Buffer.from(token, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new HttpError(401, 'wrong control token');
}

export async function readJsonBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) throw new HttpError(415, `POST bodies must be application/json, got '${type}'`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > BODY_BYTES_MAX) throw new HttpError(413, `request body over ${BODY_BYTES_MAX} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'request body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new HttpError(400, 'request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}
