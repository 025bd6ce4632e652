/**
 * Progress of a long `weir sim` run on stderr: seeds done of all, failures so far, the rate and the
 * time left, one line every few seconds (never more often), so a 10,000-seed run shows it
 * is alive without flooding the terminal.
 */
import { humanDuration } from './format.ts';

export interface SimProgressOptions {
  readonly total: number;
  readonly now: () => number;
  readonly write: (line: string) => void;
  /** Least time between two lines. */
  readonly everyMs?: number;
}

const DEFAULT_EVERY_MS = 5_000;

export class SimProgress {
  private done = 0;
  private failed = 0;
  private readonly startMs: number;
  private lastLineMs: number;

  constructor(private readonly o: SimProgressOptions) {
    this.startMs = o.now();
    this.lastLineMs = this.startMs;
  }

  /** Counts one finished seed; prints a line when the last one is old enough. */
  seedDone(passed: boolean): void {
    this.done++;
    if (!passed) this.failed++;
    const now = this.o.now();
    if (now - this.lastLineMs < (this.o.everyMs ?? DEFAULT_EVERY_MS) || this.done === this.o.total) return;
    this.lastLineMs = now;
    this.o.write(this.line(now));
  }

  line(now: number): string {
    const elapsedMs = Math.max(1, now - this.startMs);
    const perSec = (this.done * 1000) / elapsedMs;
    const left = perSec > 0 ? humanDuration(((this.o.total - this.done) / perSec) * 1000) : 'unknown';
    // Slow seeds (a large job module) read better as seconds per seed than as 0.0 seeds/s.
    const rate = perSec >= 1 ? `${perSec.toFixed(1)} seeds/s` : `${(1 / perSec).toFixed(1)} s per seed`;
    return `sim: ${this.done}/${this.o.total} seeds, ${this.failed} failed so far, ${rate}, about ${left} left`;
  }
}
