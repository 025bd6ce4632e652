/**
 * The seams for determinism: the core never reads the wall clock, schedules work or draws random
 * numbers itself; it is handed these. `adapters.ts` has the real ones, `sim/` the seeded ones.
 */
/** The time source of a job (virtual under the simulator): use it instead of Date.now. */
export interface Clock {
  /** Milliseconds since an arbitrary epoch; monotone within a run. */
  now(): number;
  /** Wall-clock milliseconds since 1970 for timestamps shown to people (metadata, listings). */
  wallNow(): number;
}

export interface Cancellable {
  cancel(): void;
}

export interface Scheduler {
  /** Runs `fn` soon, after the current step (the mailbox loop's "yield"). */
  execute(fn: () => void): void;
  /** Runs `fn` after `delayMs` of this scheduler's clock. */
  schedule(delayMs: number, fn: () => void): Cancellable;
}

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
}

/** Deterministic PRNG (mulberry32): the same seed gives the same sequence on every platform. */
export class SeededRandom implements Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** The clock, scheduler and random a runtime is built with. */
export interface Environment {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly random: Random;
}
