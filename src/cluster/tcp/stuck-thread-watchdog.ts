/**
 * The watchdog of a task manager process. In a worker thread, the job master's cancellation
 * watchdog ends a task manager stuck in user code by terminating the thread; a task manager
 * process runs its subtasks on its own main thread, which nothing outside can stop short of the
 * process. When a user function never returns, that thread answers no heartbeat: the job master
 * declares the task manager dead after `heartbeat.timeoutMs` and fails the job over without it, but
 * the process would stay, holding its slots, its memory and whatever it was doing, for ever.
 *
 * So a second thread watches the first: the main thread stamps a shared counter every
 * `BEAT_MS`; the watcher wakes every `BEAT_MS` too, and once the stamp is older than the armed
 * limit (the job master's heartbeat timeout plus its cancellation timeout: by then the job master
 * has declared this task manager dead, and a cancel would have been given up on) it writes one line
 * to stderr itself (the main thread, which owns process.stderr, cannot) and kills the process with
 * SIGKILL, as Flink's task manager ends its JVM when a task does not cancel within
 * `task.cancellation.timeout`. A supervisor (systemd, Kubernetes, `weir run
 * --task-manager-processes`) sees the exit; the job master already runs the job elsewhere.
 *
 * Time is `process.hrtime` (monotonic, one clock for both threads); the watcher is a tiny
 * CommonJS script run with `eval` so it needs no file of its own in the package.
 */
import { Worker } from 'node:worker_threads';
import { everyUnref } from '../../core/adapters.ts';
import type { Cancellable } from '../../core/time.ts';

/** How often the main thread stamps and the watcher looks (milliseconds). */
const BEAT_MS = 100;

/** Slots of the shared Int32Array. */
const STAMP = 0;
const LIMIT = 1;
const SLEEP = 2;

const WATCHER = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const view = new Int32Array(workerData.shared);
const origin = BigInt(workerData.origin);
const now = () => Number((process.hrtime.bigint() - origin) / 1000000n);
for (;;) {
  Atomics.wait(view, ${SLEEP}, 0, ${BEAT_MS});
  const limit = Atomics.load(view, ${LIMIT});
  const silent = now() - Atomics.load(view, ${STAMP});
  if (limit > 0 && silent > limit) {
    writeSync(2, workerData.prefix + ': its thread has not run for ' + silent + ' ms (limit ' + limit + ' ms: ' + workerData.why + '): a user function does not return; the job master has declared it dead and runs the job without it; ending this process\\n');
    process.kill(process.pid, 'SIGKILL');
  }
}
`;

/** The limit a task manager process arms while it serves a job: what the job master waits before it gives up on it. */
export function stuckLimitMs(watch: { readonly heartbeat: { readonly timeoutMs: number }; readonly cancellationTimeoutMs: number }): number {
  return watch.heartbeat.timeoutMs + watch.cancellationTimeoutMs;
}

export class StuckThreadWatchdog {
  private readonly view = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private readonly origin = process.hrtime.bigint();
  private readonly beat: Cancellable;
  private readonly watcher: Worker;

  /** @param prefix starts the line it writes (`weir taskmanager`). */
  constructor(prefix: string) {
    this.stamp();
    this.beat = everyUnref(BEAT_MS, () => this.stamp());
    this.watcher = new Worker(WATCHER, {
      eval: true,
      workerData: { shared: this.view.buffer, origin: this.origin.toString(), prefix, why: 'heartbeat.timeoutMs + cancellationTimeoutMs' },
    });
    this.watcher.unref();
  }

  /** From now on, a main thread silent for longer than `limitMs` ends the process. */
  arm(limitMs: number): void {
    this.stamp();
    Atomics.store(this.view, LIMIT, Math.max(1, Math.min(2 ** 31 - 1, Math.round(limitMs))));
  }

  /** No limit (no job served): an idle process is never ended. */
  disarm(): void {
    Atomics.store(this.view, LIMIT, 0);
  }

  close(): void {
    this.disarm();
    this.beat.cancel();
    void this.watcher.terminate();
  }

  private stamp(): void {
    Atomics.store(this.view, STAMP, Number((process.hrtime.bigint() - this.origin) / 1_000_000n));
  }
}
