/** The epoch of an attempt (issue 23 item 2): ordering, naming, and which control messages a task manager takes. */
import { describe, expect, it } from 'vitest';
import { admitsControl, compareEpochs, epochOf, formatEpoch, sameEpoch } from '../../src/cluster/transport/epoch.ts';
import { AssertionError } from '../../src/core/assert.ts';

describe('Epoch', () => {
  it('orders by leader epoch first, then attempt', () => {
    const sorted = [epochOf(1, 0), epochOf(0, 7), epochOf(1, 2), epochOf(0, 0)].sort(compareEpochs);
    expect(sorted.map(formatEpoch)).toEqual(['leader 0 attempt 0', 'leader 0 attempt 7', 'leader 1 attempt 0', 'leader 1 attempt 2']);
    expect(compareEpochs(epochOf(2, 3), epochOf(2, 3))).toBe(0);
    expect(sameEpoch(epochOf(2, 3), epochOf(2, 3))).toBe(true);
    expect(sameEpoch(epochOf(2, 3), epochOf(3, 2))).toBe(false);
  });

  it('is made of non-negative integers only (a programmer error otherwise)', () => {
    expect(() => epochOf(-1, 0)).toThrow(AssertionError);
    expect(() => epochOf(0, 1.5)).toThrow(/attempt must be an integer >= 0, got 1.5/);
  });

  it('a task manager takes a deploy of its epoch or a newer one, any other message only of its current epoch', () => {
    const current = epochOf(1, 4);
    const deploy = (leader: number, attempt: number) => admitsControl(current, { type: 'deploy', epoch: epochOf(leader, attempt) });
    const other = (leader: number, attempt: number) => admitsControl(current, { type: 'trigger', epoch: epochOf(leader, attempt) });
    // Older leader (even with a higher attempt), older attempt: refused; the same epoch (a restore fallback) and newer: taken.
    expect([deploy(0, 9), deploy(1, 3), deploy(1, 4), deploy(1, 5), deploy(2, 0)]).toEqual([false, false, true, true, true]);
    expect([other(0, 9), other(1, 3), other(1, 4), other(1, 5), other(2, 0)]).toEqual([false, false, true, false, false]);
    // Never deployed: only a deploy is taken.
    expect(admitsControl(null, { type: 'deploy', epoch: epochOf(0, 0) })).toBe(true);
    expect(admitsControl(null, { type: 'heartbeat', epoch: epochOf(0, 0) })).toBe(false);
  });
});
