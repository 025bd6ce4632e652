/** The restart decision: attempts and delays by strategy, and no restart for a failure that a retry cannot cure. */
import { describe, expect, it } from 'vitest';
import { decideRestart } from '../../src/cluster/restart-strategy.ts';
import { fromWireError, toWireError } from '../../src/cluster/transport/protocol.ts';
import { isRetryable, SourceRewindError, WeirError } from '../../src/core/errors.ts';

describe('decideRestart', () => {
  const fixed = { type: 'fixed-delay', attempts: 30, delayMs: 5 } as const;

  it('restarts within the attempts, with the strategy delay', () => {
    expect(decideRestart(fixed, 0, new Error('lost connection'))).toEqual({ restart: true, delayMs: 5 });
    expect(decideRestart(fixed, 30, new Error('lost connection')).restart).toBe(false);
    const exp = { type: 'exponential-delay', attempts: 5, initialDelayMs: 10, maxDelayMs: 50, multiplier: 2 } as const;
    expect(decideRestart(exp, 3)).toEqual({ restart: true, delayMs: 50 });
  });

  it('never restarts a source that cannot rewind, also wrapped with its task or carried across threads', () => {
    const rewind = new SourceRewindError('postgres-cdc x: slot past the checkpoint');
    expect(decideRestart(fixed, 0, rewind)).toEqual({ restart: false, why: 'a restart would fail the same way, so none was made' });
    // as the job master wraps a task failure: the code is kept
    const wrapped = new WeirError(rewind.code, `subtask 0 of 'cdc': ${rewind.message}`, { cause: rewind });
    expect(isRetryable(wrapped)).toBe(false);
    expect(isRetryable(fromWireError(toWireError(wrapped)))).toBe(false);
    expect(isRetryable(new Error('outer', { cause: rewind }))).toBe(false);
    expect(isRetryable(new WeirError('CONNECTOR_FAILED', 'down'))).toBe(true);
  });
});
