/**
 * Retries of S3 requests: a request that failed in a way a repeat can cure (500, 503 SlowDown,
 * 429, a timeout, a connection reset or refused mid-upload) is sent again after an exponential
 * backoff with full jitter, until the operation's deadline (the checkpoint timeout); past it the
 * last error is the operation's. Request bodies are Buffers, so a repeat sends the same bytes.
 */
import { sleep } from '../../core/adapters.ts';
import type { Clock, Random } from '../../core/time.ts';

const BACKOFF_BASE_MS = 50;
const BACKOFF_MAX_MS = 5_000;

const RETRYABLE_NAMES = new Set([
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeoutException',
  'ThrottlingException',
  'TimeoutError',
  // A request given up after requestTimeoutMs: sent again while the operation has time left.
  'AbortError',
  'NetworkingError',
]);
const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/** The HTTP status of an SDK error, when the server answered. */
export function httpStatusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** Whether sending the same request again may succeed. */
export function isRetryableS3Error(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const status = httpStatusOf(e);
    if (status !== undefined && (status >= 500 || status === 429)) return true;
    if (RETRYABLE_NAMES.has(e.name)) return true;
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && RETRYABLE_CODES.has(code)) return true;
    if (/socket hang up|ECONNRESET|premature close|aborted/i.test(e.message)) return true;
  }
  return false;
}

/** What `withRetries` needs: the time, a source of jitter, and the operation's deadline on that clock. */
export interface RetryContext {
  readonly clock: Clock;
  readonly random: Random;
  /** `clock.now()` past which no request is sent again. */
  readonly deadlineMs: number;
}

/**
 * Runs `attempt` (given the ms left until the deadline, for its own timeout) until it succeeds, it
 * fails in a way a repeat cannot cure, or the deadline leaves no time for another try.
 */
export async function withRetries<T>(ctx: RetryContext, attempt: (remainingMs: number) => Promise<T>): Promise<T> {
  let previous: unknown;
  for (let n = 0; ; n++) {
    const remainingMs = ctx.deadlineMs - ctx.clock.now();
    try {
      return await attempt(Math.max(1, Math.ceil(remainingMs)));
    } catch (err) {
      const delayMs = ctx.random.next() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** n);
      if (!isRetryableS3Error(err)) throw err;
      if (ctx.clock.now() + delayMs >= ctx.deadlineMs) {
        // An attempt cut off by the deadline says only that time ran out; the failure the retries
        // were up against (503 SlowDown, a reset) is the one worth reporting.
        throw previous !== undefined && isAbort(err) ? previous : err;
      }
      previous = err;
      await sleep(delayMs);
    }
  }
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}
