import { describe, expect, it } from 'vitest';
import { StreamEnvironment } from '../../src/api/environment.ts';
import {
  DEFAULT_RESTART_STRATEGY,
  decideRestart,
  type RestartDecision,
  type RestartStrategyConfig,
  restartTimesToKeep,
} from '../../src/cluster/job-master/restart-strategy.ts';
import { fromWireError, toWireError } from '../../src/cluster/transport/protocol.ts';
import { isRetryable, SourceRewindError, WeirError } from '../../src/core/errors.ts';
import type { Clock } from '../../src/core/time.ts';
import { ManualEnvironment } from '../support/manual-env.ts';

/** A clock a test moves by hand, far from zero: the decision reads time only through it. */
const manualClock = () => new ManualEnvironment({ startMs: 1_000_000 });

/** Feeds failures to the pure decision as the job master does: a restart is recorded at the clock's time, the newest few kept. */
class Restarts {
  private restartsSoFar = 0;
  private readonly restartTimesMs: number[] = [];
  constructor(
    private readonly config: RestartStrategyConfig,
    private readonly clock: Clock,
  ) {}
  fail(): RestartDecision {
    const d = decideRestart(this.config, { restartsSoFar: this.restartsSoFar, restartTimesMs: this.restartTimesMs }, this.clock.now());
    if (d.restart) {
      this.restartsSoFar++;
      this.restartTimesMs.push(this.clock.now());
      while (this.restartTimesMs.length > restartTimesToKeep(this.config)) this.restartTimesMs.shift();
    }
    return d;
  }
}

describe('restart strategy: failure-rate', () => {
  it('is the default: two database restarts of two failures each (and more) keep the job running', () => {
    const config = StreamEnvironment.create({}).options.restartStrategy;
    expect(config).toEqual({ type: 'failure-rate', maxFailures: 10, intervalMs: 300_000, delayMs: 1000 });
    const clock = manualClock();
    const r = new Restarts(config, clock);
    // A restart of the database: the connection drops, then the first restart finds it still down.
    for (let outage = 0; outage < 4; outage++) {
      expect(r.fail()).toEqual({ restart: true, delayMs: 1000 });
      clock.advance(1000);
      expect(r.fail()).toEqual({ restart: true, delayMs: 1000 });
      clock.advance(60_000);
    }
  });

  it('fails the job on the failure after maxFailures restarts within the interval, naming the limit', () => {
    const clock = manualClock();
    const r = new Restarts({ type: 'failure-rate', maxFailures: 3, intervalMs: 10_000, delayMs: 50 }, clock);
    for (let i = 0; i < 3; i++) {
      expect(r.fail()).toEqual({ restart: true, delayMs: 50 });
      clock.advance(1000);
    }
    const d = r.fail();
    expect(d.restart).toBe(false);
    expect(!d.restart && d.why).toBe('restartStrategy failure-rate allows 3 restarts within 10000 ms and 3 were made in the last 10000 ms');
  });

  it('gives the budget back after a stable period: a restart exactly intervalMs old no longer counts', () => {
    const clock = manualClock();
    const r = new Restarts({ type: 'failure-rate', maxFailures: 2, intervalMs: 10_000, delayMs: 0 }, clock);
    expect(r.fail().restart).toBe(true); // t = 0
    clock.advance(4000);
    expect(r.fail().restart).toBe(true); // t = 4000
    clock.advance(5999);
    expect(r.fail().restart).toBe(false); // t = 9999: both restarts are within 10 s
    clock.advance(1);
    expect(r.fail().restart).toBe(true); // t = 10000: the first one aged out
    expect(r.fail().restart).toBe(false); // 4000 and 10000 are within 10 s
    clock.advance(10_000);
    expect(r.fail().restart).toBe(true); // a stable period: the whole budget is back
    expect(r.fail().restart).toBe(true);
    expect(r.fail().restart).toBe(false);
  });

  it('maxFailures 0 never restarts; the job keeps only maxFailures restart times', () => {
    const clock = manualClock();
    expect(new Restarts({ type: 'failure-rate', maxFailures: 0, intervalMs: 1000, delayMs: 0 }, clock).fail().restart).toBe(false);
    expect(restartTimesToKeep({ type: 'failure-rate', maxFailures: 7, intervalMs: 1000, delayMs: 0 })).toBe(7);
    expect(restartTimesToKeep({ type: 'fixed-delay', attempts: 3, delayMs: 0 })).toBe(0);
  });

  it('options: failure-rate with partial fields takes the defaults; bad values name the option', () => {
    expect(StreamEnvironment.create({ restartStrategy: { type: 'failure-rate', maxFailures: 2 } }).options.restartStrategy).toEqual({
      type: 'failure-rate',
      maxFailures: 2,
      intervalMs: 300_000,
      delayMs: 1000,
    });
    expect(() => StreamEnvironment.create({ restartStrategy: { type: 'failure-rate', intervalMs: 0 } })).toThrow(/restartStrategy\.intervalMs/);
    expect(() => StreamEnvironment.create({ restartStrategy: { type: 'failure-rate', attempts: 3 } as never })).toThrow(/restartStrategy\.attempts/);
  });
});

describe('restart strategy: counted strategies ignore the clock', () => {
  it('fixed-delay allows exactly its attempts however far apart', () => {
    const clock = manualClock();
    const r = new Restarts({ type: 'fixed-delay', attempts: 2, delayMs: 5 }, clock);
    expect(r.fail().restart).toBe(true);
    clock.advance(1e9);
    expect(r.fail().restart).toBe(true);
    clock.advance(1e9);
    expect(r.fail()).toEqual({ restart: false, why: 'restartStrategy fixed-delay allows 2 restarts and all were used' });
  });
});

describe('restart strategy: a failure a retry cannot cure', () => {
  const fixed = { type: 'fixed-delay', attempts: 30, delayMs: 5 } as const;
  const none = { restartsSoFar: 0, restartTimesMs: [] };

  it('restarts an ordinary failure within the attempts', () => {
    expect(decideRestart(fixed, none, 0, new Error('lost connection'))).toEqual({ restart: true, delayMs: 5 });
    expect(decideRestart(fixed, { restartsSoFar: 30, restartTimesMs: [] }, 0, new Error('lost connection')).restart).toBe(false);
  });

  it('never restarts a source that cannot rewind, also wrapped with its task or carried across threads', () => {
    const rewind = new SourceRewindError('postgres-cdc x: slot past the checkpoint');
    expect(decideRestart(fixed, none, 0, rewind)).toEqual({ restart: false, why: 'a restart would fail the same way, so none was made' });
    expect(decideRestart(DEFAULT_RESTART_STRATEGY, none, 0, rewind).restart).toBe(false);
    // as the job master wraps a task failure: the code is kept
    const wrapped = new WeirError(rewind.code, `subtask 0 of 'cdc': ${rewind.message}`, { cause: rewind });
    expect(isRetryable(wrapped)).toBe(false);
    expect(isRetryable(fromWireError(toWireError(wrapped)))).toBe(false);
    expect(isRetryable(new Error('outer', { cause: rewind }))).toBe(false);
    expect(isRetryable(new WeirError('CONNECTOR_FAILED', 'down'))).toBe(true);
  });
});
