/** The CDC reader's bounded queue: full and room reported once each way, a waiting copy released at half. */
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
});
