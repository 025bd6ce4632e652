/**
 * The one hand-driven clock and scheduler of the tests: time moves only when the test says so, and
 * scheduled work runs only while the test advances time, in time order (ties in the order they
 * were scheduled). It is a Clock, a Scheduler and an operator's ProcessingTimeService at once, and
 * `environment` hands it to whatever takes an Environment. The simulator's SimWorld is the seeded
 * one; this one decides nothing by itself.
 */
import { SeededRandom, type Cancellable, type Clock, type Environment, type Random, type Scheduler } from '../../src/core/time.ts';
import type { ProcessingTimeService } from '../../src/runtime/time/processing-time.ts';

/** What `wallNow` adds to `now`, as in SimWorld: wall-clock timestamps look like real ones. */
export const MANUAL_WALL_EPOCH_MS = 1_700_000_000_000;

interface Timer {
  readonly atMs: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

export class ManualEnvironment implements Clock, Scheduler, ProcessingTimeService {
  readonly random: Random;
  private nowMs: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(options: { readonly startMs?: number; readonly seed?: number } = {}) {
    this.nowMs = options.startMs ?? 0;
    this.random = new SeededRandom(options.seed ?? 1);
  }

  get environment(): Environment {
    return { clock: this, scheduler: this, random: this.random };
  }

  now(): number {
    return this.nowMs;
  }

  wallNow(): number {
    return MANUAL_WALL_EPOCH_MS + this.nowMs;
  }

  /** Runs `fn` at the next `advance`, at the current time. */
  execute(fn: () => void): void {
    this.scheduleAt(this.nowMs, fn);
  }

  schedule(delayMs: number, fn: () => void): Cancellable {
    return this.scheduleAt(this.nowMs + Math.max(0, delayMs), fn);
  }

  /** Runs `fn` once the test advanced time to `timeMs` (at the next advance if it is past). */
  scheduleAt(timeMs: number, fn: () => void): Cancellable {
    const timer: Timer = { atMs: timeMs, seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** `advanceTo(now + ms)`. */
  advance(ms: number): void {
    this.advanceTo(this.nowMs + ms);
  }

  /**
   * Runs every timer due by `timeMs` in time order, the clock showing each one's time while it
   * runs (timers scheduled meanwhile run too when due), then sets the clock to `timeMs`.
   */
  advanceTo(timeMs: number): void {
    if (timeMs < this.nowMs) throw new Error(`ManualEnvironment.advanceTo(${timeMs}): the clock is at ${this.nowMs} and never goes back`);
    for (let due = this.nextDue(timeMs); due !== undefined; due = this.nextDue(timeMs)) {
      this.timers.splice(this.timers.indexOf(due), 1);
      this.nowMs = Math.max(this.nowMs, due.atMs);
      due.fn();
    }
    this.nowMs = timeMs;
  }

  /** The thread stands still: the clock moves by `ms` and nothing runs. */
  stall(ms: number): void {
    this.nowMs += ms;
  }

  private nextDue(timeMs: number): Timer | undefined {
    this.timers = this.timers.filter((t) => !t.cancelled);
    let best: Timer | undefined;
    for (const t of this.timers) {
      if (t.atMs <= timeMs && (best === undefined || t.atMs < best.atMs || (t.atMs === best.atMs && t.seq < best.seq))) best = t;
    }
    return best;
  }
}
