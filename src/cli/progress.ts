/**
 * The live progress display of a running job: records/s in and out (from metrics() deltas), status,
 * attempt and the last completed checkpoint. On a TTY it is one line rewritten in place every
 * 250 ms; otherwise a line is printed when a checkpoint completes (at most one a second) or after
 * 5 s of silence. Restarts, restore fallbacks and checkpoint failures are logged as lines of their own.
 */
import { sleep, systemClock } from '../core/adapters.ts';
import type { CheckpointStats, JobClient, JobEvent, JobMetrics } from '../index.ts';
import { humanBytes, humanRate, oneLine } from './format.ts';

export interface ProgressOptions {
  readonly stream: NodeJS.WritableStream;
  /** Rewrite one line in place (stderr is a terminal). */
  readonly tty: boolean;
  /** No live display and no per-checkpoint lines; warnings are still logged. */
  readonly quiet: boolean;
}

interface Sample {
  readonly atMs: number;
  readonly attempt: number;
  readonly recordsIn: number;
  readonly recordsOut: number;
}

const TICK_MS = 250;
const RATE_WINDOW_MS = 1000;
const PLAIN_MIN_GAP_MS = 500;
const PLAIN_IDLE_MS = 5000;

export class ProgressDisplay {
  private client: JobClient | null = null;
  private samples: Sample[] = [];
  private lineShown = false;
  private lastPlainLineMs = -Infinity;
  private attachedAtMs = 0;
  private stopped = false;
  private lastFallbackReason: string | null = null;
  restoredFrom: number | null = null;
  /** Checkpoints completed in this run, counted from events (the job's history is bounded). */
  checkpointsCompleted = 0;

  constructor(private readonly opts: ProgressOptions) {}

  /** Starts sampling the job's metrics; events may arrive before this. */
  attach(client: JobClient): void {
    this.client = client;
    this.attachedAtMs = systemClock.now();
    this.sample();
    if (!this.opts.quiet) void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.clearLine();
  }

  onEvent(event: JobEvent): void {
    switch (event.type) {
      case 'running':
        if (event.restoredFrom !== null) this.restoredFrom = event.restoredFrom;
        if (event.attempt > 0 || event.restoredFrom !== null) {
          const from = event.restoredFrom === null ? 'no completed checkpoint: starting from the beginning' : `restored from checkpoint ${event.restoredFrom}`;
          this.log(`running attempt ${event.attempt}, ${from}`);
        }
        return;
      case 'checkpoint-completed':
        this.checkpointsCompleted++;
        if (!this.opts.tty && !this.opts.quiet && systemClock.now() - this.lastPlainLineMs >= PLAIN_MIN_GAP_MS) this.printPlain();
        return;
      case 'checkpoint-failed':
        this.log(
          `checkpoint ${event.stats.checkpointId} failed${event.stats.failureReason ? ` (${event.stats.failureReason})` : ''}: ${event.stats.failureMessage ?? 'no reason given'}`,
        );
        return;
      case 'restarting':
        this.log(`restarting: attempt ${event.attempt} in ${event.delayMs} ms after failure: ${event.cause}`);
        return;
      case 'restore-fallback':
        this.lastFallbackReason = event.reason;
        this.log(`restore fallback: ${event.reason}; trying an older retained checkpoint`);
        return;
      case 'log':
        if (this.lastFallbackReason !== null && event.message.startsWith(this.lastFallbackReason)) return;
        this.log(event.message);
        return;
      case 'finished':
      case 'failed':
      case 'canceled':
        return;
    }
  }

  /** The status line for the current metrics. */
  statusLine(): string {
    if (this.client === null) return 'CREATED';
    this.sample();
    const m = this.client.metrics();
    const { inPerSec, outPerSec } = this.rates();
    return formatStatus(m, inPerSec, outPerSec);
  }

  /** Prints a line that stays (a log line), keeping the live line below it. */
  log(message: string): void {
    this.clearLine();
    this.opts.stream.write(`${oneLine(message)}\n`);
    if (this.opts.tty && !this.opts.quiet && !this.stopped && this.client) this.draw();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await sleep(TICK_MS);
      if (this.stopped) return;
      if (this.opts.tty) this.draw();
      else if (systemClock.now() - Math.max(this.lastPlainLineMs, this.attachedAtMs) >= PLAIN_IDLE_MS) this.printPlain();
    }
  }

  private sample(): void {
    if (!this.client) return;
    const m = this.client.metrics();
    const now = systemClock.now();
    const last = this.samples[this.samples.length - 1];
    // Counts are per attempt: a new attempt (or a teardown) starts the window afresh.
    if (last && (last.attempt !== m.attempt || m.recordsIn < last.recordsIn || m.recordsOut < last.recordsOut)) this.samples = [];
    this.samples.push({ atMs: now, attempt: m.attempt, recordsIn: m.recordsIn, recordsOut: m.recordsOut });
    while (this.samples.length > 2 && now - this.samples[1]!.atMs >= RATE_WINDOW_MS) this.samples.shift();
  }

  private rates(): { inPerSec: number; outPerSec: number } {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.atMs - first.atMs <= 0) return { inPerSec: 0, outPerSec: 0 };
    const dt = (last.atMs - first.atMs) / 1000;
    return { inPerSec: (last.recordsIn - first.recordsIn) / dt, outPerSec: (last.recordsOut - first.recordsOut) / dt };
  }

  private draw(): void {
    const columns = (this.opts.stream as { columns?: number }).columns ?? 120;
    const line = this.statusLine();
    this.opts.stream.write(`\r${line.length >= columns ? line.slice(0, columns - 1) : line}\x1b[K`);
    this.lineShown = true;
  }

  private printPlain(): void {
    this.lastPlainLineMs = systemClock.now();
    this.opts.stream.write(`${this.statusLine()}\n`);
  }

  private clearLine(): void {
    if (!this.lineShown) return;
    this.opts.stream.write('\r\x1b[K');
    this.lineShown = false;
  }
}

export function formatCheckpoint(stats: CheckpointStats | null): string {
  if (stats === null) return 'no checkpoint yet';
  return `checkpoint ${stats.checkpointId}: ${Math.round(stats.durationMs)} ms, ${humanBytes(stats.persistedBytes)}`;
}

export function formatStatus(m: JobMetrics, inPerSec: number, outPerSec: number): string {
  return [
    m.status,
    `attempt ${m.attempt}`,
    `in ${humanRate(inPerSec).padStart(5)} out ${humanRate(outPerSec).padStart(5)} rec/s`,
    formatCheckpoint(m.lastCheckpoint),
  ].join(' | ');
}
