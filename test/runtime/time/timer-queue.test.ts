import { describe, expect, it } from 'vitest';
import { keyGroup } from '../../../src/core/ids.ts';
import { SeededRandom } from '../../../src/core/time.ts';
import { KeyGroupedTimerQueue } from '../../../src/runtime/time/key-grouped-timer-queue.ts';
import { compareTimers, type TimerEntry } from '../../../src/runtime/time/timer-queue.ts';

describe('timer index: a priority queue per key group', () => {
  it('pops every timer in (time, key group, key, namespace) order, however pushes and pops interleave', () => {
    const r = new SeededRandom(5);
    const q = new KeyGroupedTimerQueue();
    const all: TimerEntry[] = [];
    const popped: TimerEntry[] = [];
    const present: TimerEntry[] = [];
    for (let i = 0; i < 3_000; i++) {
      if (r.next() < 0.65) {
        const e: TimerEntry = { timeMs: r.int(500), keyGroup: keyGroup(r.int(16)), key: `k${r.int(40)}`, namespace: r.next() < 0.5 ? '' : 'w' };
        all.push(e);
        present.push(e);
        q.push(e);
      } else {
        const e = q.pop();
        if (present.length === 0) expect(e).toBeUndefined();
        else {
          // The smallest timer present at that moment.
          present.sort(compareTimers);
          expect(compareTimers(e!, present[0]!)).toBe(0);
          present.splice(present.indexOf(e!), 1);
          popped.push(e!);
        }
      }
      expect(q.size).toBe(all.length - popped.length);
    }
    for (let e = q.pop(); e; e = q.pop()) popped.push(e);
    expect(q.size).toBe(0);
    expect(q.keyGroups).toBe(0);
    expect([...popped].sort(compareTimers)).toEqual([...all].sort(compareTimers));
    const tail = popped.slice(-200);
    expect(tail).toEqual([...tail].sort(compareTimers));
  });

  it('ties in time go by key group, then key, then namespace', () => {
    const q = new KeyGroupedTimerQueue();
    const t = (kg: number, key: string, ns: string): TimerEntry => ({ timeMs: 7, keyGroup: keyGroup(kg), key, namespace: ns });
    for (const e of [t(3, 'a', ''), t(1, 'b', 'x'), t(1, 'b', ''), t(1, 'a', 'z'), { ...t(0, 'z', ''), timeMs: 8 }]) q.push(e);
    const order: string[] = [];
    for (let e = q.pop(); e; e = q.pop()) order.push(`${e.timeMs}/${e.keyGroup}/${e.key}/${e.namespace}`);
    expect(order).toEqual(['7/1/a/z', '7/1/b/', '7/1/b/x', '7/3/a/', '8/0/z/']);
  });
});
