/** The CDC reader's bounded queue: full and room reported once each way, a waiting copy released at half, a waiting fetch woken. */
import { describe, expect, it } from 'vitest';
import { ChangeQueue } from '../../../../src/connectors/postgres/cdc/change-queue.ts';

describe('ChangeQueue', () => {
  it('reports full at capacity, room once drained to half, and releases a waiting copy then', async () => {
    const events: string[] = [];
    const q = new ChangeQueue<number>(
      4,
      () => events.push('full'),
      () => events.push('room'),
    );
    for (let i = 0; i < 5; i++) q.push(i);
    expect(events).toEqual(['full']);
    let released = false;
    void Promise.resolve(q.space()).then(() => (released = true));
    const drained: number[] = [];
    for (let k = 0; k < 2; k++) {
      drained.push(q.peek()!);
      q.drop();
    }
    q.settle();
    await Promise.resolve();
    expect(events).toEqual(['full']); // 3 left: more than half
    expect(released).toBe(false);
    drained.push(q.peek()!);
    q.drop();
    q.settle();
    await Promise.resolve();
    expect(events).toEqual(['full', 'room']);
    expect(released).toBe(true);
    expect(drained).toEqual([0, 1, 2]);
    expect(q.size).toBe(2);
    expect(q.space()).toBeUndefined();
    q.clear();
    expect(q.peek()).toBeUndefined();
  });

  it('lets a fetch wait while empty: woken by the next entry, by wake (a failure) and by clear (closing)', async () => {
    const q = new ChangeQueue<number>(
      4,
      () => {},
      () => {},
    );
    let woken = 0;
    const wait = async (): Promise<void> => {
      await q.nonEmpty();
      woken++;
    };
    const first = wait();
    await Promise.resolve();
    expect(woken).toBe(0);
    q.push(1);
    await first;
    expect(woken).toBe(1);
    expect(q.nonEmpty()).toBeUndefined(); // not empty: no wait
    q.drop();
    q.settle();
    const second = wait();
    q.wake();
    await second;
    const third = wait();
    q.clear();
    await third;
    expect(woken).toBe(3);
    expect(q.size).toBe(0);
  });
});
