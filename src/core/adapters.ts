/**
 * The production Clock, Scheduler and Random: the only place in src/ that touches the wall clock,
 * Node's timers and Math.random (a test checks that).
 */
import { performance } from 'node:perf_hooks';
import type { Cancellable, Clock, Environment, Random, Scheduler } from './time.ts';
import { SeededRandom } from './time.ts';

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
};

export const realScheduler: Scheduler = {
  execute(fn: () => void): void {
    setImmediate(fn);
  },
  schedule(delayMs: number, fn: () => void): Cancellable {
    const handle = setTimeout(fn, Math.max(0, delayMs));
    return { cancel: () => clearTimeout(handle) };
  },
};

export function systemRandom(): Random {
  return new SeededRandom(Math.floor(Math.random() * 0x1_0000_0000));
}

export function realEnvironment(): Environment {
  return { clock: systemClock, scheduler: realScheduler, random: systemRandom() };
}

/** Lets every pending promise callback and I/O callback run; used by drivers outside the core. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves after `ms` of wall time; for drivers outside the core (CLI, benchmarks). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `fn` every `ms` of wall time without keeping the process alive (the timer is unref'd); for
 * drivers outside the core (the web server's sampling).
 */
export function everyUnref(ms: number, fn: () => void): Cancellable {
  const handle = setInterval(fn, ms);
  handle.unref();
  return { cancel: () => clearInterval(handle) };
}

/**
 * A timer on the wall clock for network code outside any seeded world (connections, handshakes):
 * `unref` lets the process end while it is pending.
 */
export function wallTimer(delayMs: number, fn: () => void, o: { unref?: boolean } = {}): Cancellable {
  const handle = setTimeout(fn, Math.max(0, delayMs));
  if (o.unref === true) handle.unref();
  return { cancel: () => clearTimeout(handle) };
}
