/**
 * The client side of the control endpoint (control-server.ts): resolves what a person typed as
 * `<job>` — a job id registered by `weir run` for this user (or the job's name, when exactly one
 * running job has it), or an `http://127.0.0.1:<port>` address of a registered job — to its
 * address and token, and calls one route. A request the job refuses (4xx) is a UsageError (exit
 * 2); a failure of the job or an unreachable endpoint is an Error (exit 1).
 */
import * as http from 'node:http';
import { UsageError } from './exit.ts';
import { isJobIdLike, isProcessAlive, listJobs, lookupJob, registryDir, registryFile, removeStaleEntry, type RegisteredJob } from './job-registry.ts';

/** A job's control endpoint, the token it demands, and how to name the job in messages. */
export interface ControlTarget {
  readonly address: string;
  readonly token: string;
  readonly label: string;
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost']);
/** `GET /status` answers at once; savepoints, stops and cancels take as long as the job needs. */
const STATUS_TIMEOUT_MS = 10_000;

export function resolveJob(ref: string): ControlTarget {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) {
    const address = parseAddress(ref);
    return { address, token: byAddress(address).token, label: `the job at ${address}` };
  }
  if (!isJobIdLike(ref)) throw new UsageError(`not a job id or control address: '${ref}'`);
  const entry = lookupJob(ref) ?? byName(ref);
  if (!isProcessAlive(entry.pid)) {
    removeStaleEntry(entry.jobId);
    throw new UsageError(
      `job '${entry.jobId}' is not running: its weir run process ${entry.pid} is gone (removed the stale entry ${registryFile(entry.jobId)})`,
    );
  }
  return { address: parseAddress(entry.address), token: entry.token, label: `job ${entry.jobId}` };
}

/** The registered job serving `address`: its token is only in the registry. */
function byAddress(address: string): RegisteredJob {
  const entry = listJobs().find((j) => sameAddress(j.address, address));
  if (entry === undefined)
    throw new UsageError(
      `no job registered in ${registryDir()} serves ${address}: weir needs the job's token from its registry entry (is WEIR_HOME the same as for its weir run?)`,
    );
  return entry;
}

function sameAddress(a: string, b: string): boolean {
  const local = (s: string) => s.replace('://localhost:', '://127.0.0.1:');
  return local(a) === local(b);
}

/** The one live job running under the name `name`; none or several is a UsageError. */
function byName(name: string): RegisteredJob {
  const live = listJobs().filter((j) => j.name === name && isProcessAlive(j.pid));
  if (live.length === 1) return live[0]!;
  if (live.length > 1) throw new UsageError(`${live.length} jobs run under the name '${name}': ${live.map((j) => j.jobId).join(', ')}; give the job id`);
  throw new UsageError(`no running job '${name}': it is not registered in ${registryDir()} (give the job id or the control address that weir run printed)`);
}

function parseAddress(ref: string): string {
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new UsageError(`not a control address: '${ref}' (expected http://127.0.0.1:<port>)`);
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || url.port === '') {
    throw new UsageError(`not a control address: '${ref}' (expected http://127.0.0.1:<port>; control endpoints listen on loopback only)`);
  }
  return `http://${url.hostname}:${url.port}`;
}

/** Calls `method route` on the job's endpoint; resolves with the JSON answer of a 2xx. */
export function callControl(target: ControlTarget, method: 'GET' | 'POST', route: string, body?: Record<string, unknown>): Promise<Record<string, unknown>> {
  const url = new URL(route, target.address);
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        // Not the global agent: Node 20's keeps sockets alive with a 5 s idle timeout, which fired on
        // a cancel waiting out a subtask stuck in user code (up to cancellationTimeoutMs).
        agent: false,
        ...(method === 'GET' ? { timeout: STATUS_TIMEOUT_MS } : {}),
        headers: {
          ...(method === 'POST' ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          authorization: `Bearer ${target.token}`,
          connection: 'close',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => (text += s));
        res.on('error', reject);
        res.on('end', () => {
          try {
            resolve(answerOf(target, res.statusCode ?? 0, text));
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${STATUS_TIMEOUT_MS} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => reject(unreachable(target, err)));
    req.end(payload);
  });
}

function answerOf(target: ControlTarget, status: number, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${target.address} did not answer as a weir control endpoint (HTTP ${status}, not JSON)`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${target.address} did not answer as a weir control endpoint (HTTP ${status})`);
  const answer = parsed as Record<string, unknown>;
  if (status >= 200 && status < 300) return answer;
  const message = `${target.label}: ${typeof answer.error === 'string' ? answer.error : `HTTP ${status}`}`;
  if (status >= 400 && status < 500) throw new UsageError(message);
  throw new Error(message);
}

function unreachable(target: ControlTarget, err: NodeJS.ErrnoException): Error {
  const where = target.label.includes(target.address) ? target.label : `${target.label} at ${target.address}`;
  if (err.code === 'ECONNREFUSED') return new Error(`cannot reach ${where}: connection refused (has its weir run ended?)`);
  return new Error(`cannot reach ${where}: ${err.message}`);
}
