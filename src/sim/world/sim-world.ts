/**
 * The simulated world: a virtual clock and a seeded scheduler that decide the order of every
 * subtask step, message, timer and storage completion of a real job, in one thread. The same seed
 * gives the same order, and the trace hash says so.
 */
import { assert } from '../../core/assert.ts';
import { SeededRandom, type Cancellable, type Clock, type Environment, type Random, type Scheduler } from '../../core/time.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

export interface SimWorldOptions {
  /** Virtual milliseconds a step may take, drawn uniformly up to this. */
  readonly stepCostMsMax: number;
  /** Probability that a runnable event is held back a little (a slow subtask or channel). */
  readonly slowProbability: number;
  readonly slowDelayMsMax: number;
}

export class SimWorld implements Clock, Scheduler {
  readonly random: Random;
  private nowMs = 0;
  private readonly ready: Array<() => void> = [];
  private timers: Timer[] = [];
  private seq = 0;
  private hash = 0x811c9dc5;
  steps = 0;
  slowActive = true;

  constructor(
    readonly seed: number,
    private readonly options: SimWorldOptions,
  ) {
    this.random = new SeededRandom(seed);
  }

  get environment(): Environment {
    return { clock: this, scheduler: this, random: this.random };
  }

  now(): number {
    return this.nowMs;
  }

  wallNow(): number {
    return 1_700_000_000_000 + Math.floor(this.nowMs);
  }

  execute(fn: () => void): void {
    if (this.slowActive && this.random.next() < this.options.slowProbability) {
      this.schedule(this.random.next() * this.options.slowDelayMsMax, fn);
      return;
    }
    this.ready.push(fn);
  }

  schedule(delayMs: number, fn: () => void): Cancellable {
    const timer: Timer = { at: this.nowMs + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Whether anything is left to run. */
  get idle(): boolean {
    return this.ready.length === 0 && this.timers.every((t) => t.cancelled);
  }

  /** Runs one event chosen by the seed; false when nothing is left. */
  step(): boolean {
    this.moveDueTimers();
    if (this.ready.length === 0) {
      const next = this.earliestTimer();
      if (!next) return false;
      this.nowMs = Math.max(this.nowMs, next.at);
      this.moveDueTimers();
    }
    assert(this.ready.length > 0, 'sim: nothing ready after advancing time');
    const i = this.random.int(this.ready.length);
    const fn = this.ready[i]!;
    this.ready[i] = this.ready[this.ready.length - 1]!;
    this.ready.pop();
    this.mix(i);
    this.mix(Math.floor(this.nowMs * 1000));
    this.steps++;
    fn();
    this.nowMs += this.random.next() * this.options.stepCostMsMax;
    return true;
  }

  /** Folds a value into the trace hash (FNV-1a over 32-bit words). */
  mix(value: number): void {
    let h = this.hash ^ (value | 0);
    h = Math.imul(h, 0x01000193);
    this.hash = h >>> 0;
  }

  get traceHash(): string {
    return this.hash.toString(16).padStart(8, '0');
  }

  private moveDueTimers(): void {
    if (this.timers.length === 0) return;
    const due: Timer[] = [];
    const rest: Timer[] = [];
    for (const t of this.timers) {
      if (t.cancelled) continue;
      (t.at <= this.nowMs ? due : rest).push(t);
    }
    this.timers = rest;
    due.sort((a, b) => a.at - b.at || a.seq - b.seq);
    // Cancelled after it fell due but before it ran, a timer does not run (as clearTimeout): its
    // place among the ready events stays, so the seed's choices stay as they were.
    for (const t of due) this.ready.push(() => t.cancelled || t.fn());
  }

  private earliestTimer(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers) if (!t.cancelled && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    return best;
  }
}
