/**
 * Runs a built job to its end under the CLI: progress display, event logging, SIGINT handling
 * (cancel, then exit 130) and the final status line. Shared by `weir run` and `weir demo`.
 */
import { systemClock } from '../core/adapters.ts';
import { errorMessage } from '../core/errors.ts';
import type { JobClient, JobResult, StreamEnvironment } from '../index.ts';
import type { InternalRunOptions } from '../internal.ts';
import { humanDuration, oneLine } from './format.ts';
import { ProgressDisplay, formatCheckpoint } from './progress.ts';

export interface SuperviseOptions {
  readonly quiet: boolean;
  readonly stream?: NodeJS.WriteStream;
  /** Called once the job runs, before its end is awaited; `log` prints a line without garbling the live display. */
  readonly onStarted?: (client: JobClient, log: (line: string) => void) => void;
  /**
   * Takes the first SIGINT/SIGTERM instead of cancelling the job (a leader with high availability
   * steps down: the job is not over); absent, the signal cancels the job.
   */
  readonly onSignal?: (signal: NodeJS.Signals, log: (line: string) => void) => void;
}

interface OutcomeCommon {
  readonly jobId: string;
  readonly elapsedMs: number;
  readonly restoredFrom: number | null;
  /** Every checkpoint that completed in the run (the job's checkpoint history keeps only the last 100). */
  readonly checkpointsCompleted: number;
}

export type JobOutcome =
  | (OutcomeCommon & { readonly status: 'FINISHED' | 'CANCELED'; readonly result: JobResult })
  | (OutcomeCommon & { readonly status: 'FAILED'; readonly error: Error });

/** Starts the job (errors before it runs are thrown) and waits for its end (which is returned). */
export async function superviseJob(env: StreamEnvironment, name: string, run: InternalRunOptions, opts: SuperviseOptions): Promise<JobOutcome> {
  const stream = opts.stream ?? process.stderr;
  const display = new ProgressDisplay({ stream, tty: stream.isTTY === true, quiet: opts.quiet });
  const startMs = systemClock.now();
  const client = await env.executeAsync(name, {
    ...run,
    onEvent: (event) => {
      display.onEvent(event);
      run.onEvent?.(event);
    },
  });
  display.attach(client);
  opts.onStarted?.(client, (line) => display.log(line));
  const removeSignals = cancelOnSignals(client, display, opts.onSignal);
  const removeStallGuard = failIfStalled(client);
  try {
    const result = await Promise.race([client.result, removeStallGuard.stalled]);
    return {
      status: result.status,
      jobId: client.jobId,
      result,
      elapsedMs: systemClock.now() - startMs,
      restoredFrom: display.restoredFrom,
      checkpointsCompleted: display.checkpointsCompleted,
    };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(errorMessage(err));
    return {
      status: 'FAILED',
      jobId: client.jobId,
      error,
      elapsedMs: systemClock.now() - startMs,
      restoredFrom: display.restoredFrom,
      checkpointsCompleted: display.checkpointsCompleted,
    };
  } finally {
    removeSignals();
    removeStallGuard.remove();
    display.stop();
  }
}

/** First SIGINT/SIGTERM cancels the job (retained checkpoints stay), or goes to `instead`; a second one exits at once. */
function cancelOnSignals(client: JobClient, display: ProgressDisplay, instead?: SuperviseOptions['onSignal']): () => void {
  let cancelling = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (cancelling) process.exit(signal === 'SIGINT' ? 130 : 143);
    cancelling = true;
    if (instead !== undefined) {
      instead(signal, (line) => display.log(line));
      return;
    }
    display.log(`${signal}: cancelling the job (again to exit at once)`);
    void client.cancel();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/**
 * Nothing is left to run but the job has not ended: the engine lost track of it. Without this the
 * process would exit with Node's code 13 (unsettled top-level await) and no message.
 */
function failIfStalled(client: JobClient): { stalled: Promise<never>; remove: () => void } {
  let reject!: (err: Error) => void;
  const stalled = new Promise<never>((_, r) => (reject = r));
  stalled.catch(() => {});
  const onBeforeExit = () => {
    const m = client.metrics();
    reject(new Error(`job ${client.jobId} stalled in status ${m.status} (attempt ${m.attempt}): nothing is scheduled and it neither finished nor failed`));
  };
  process.on('beforeExit', onBeforeExit);
  return { stalled, remove: () => process.off('beforeExit', onBeforeExit) };
}

/** The final status line of a job. */
export function finalStatusLine(outcome: JobOutcome): string {
  const took = humanDuration(outcome.elapsedMs);
  if (outcome.status === 'FAILED') return `FAILED | job ${outcome.jobId} after ${took}`;
  const r = outcome.result;
  const last = r.checkpoints.findLast((c) => c.status === 'COMPLETED') ?? null;
  const n = outcome.checkpointsCompleted;
  const parts = [
    `${outcome.status} | job ${outcome.jobId} ${outcome.status === 'FINISHED' ? 'in' : 'after'} ${took}`,
    `${r.restarts} restart${r.restarts === 1 ? '' : 's'}`,
    `${n} checkpoint${n === 1 ? '' : 's'}${last ? `, last ${formatCheckpoint(last)}` : ''}`,
  ];
  if (r.lastCheckpointLocation) parts.push(`retained at ${r.lastCheckpointLocation}`);
  return parts.join(' | ');
}

export function failureLine(error: Error): string {
  return `weir: ${oneLine(error.message)}`;
}
