/**
 * The leadership logic on a manual clock over the in-memory HA store (the same rules as the
 * PostgreSQL one, whose own test runs against the server): election and standby, renewals keeping
 * the lease, the local deadline deposing a leader whose renewals do not get through, a refused
 * renewal or pointer deposing it at once, and the margin that keeps the local deadline before the
 * store's expiry.
 */
import { describe, expect, it } from 'vitest';
import type { HaError } from '../../../src/core/errors.ts';
import { elect, localDeadline, type Leadership } from '../../../src/cluster/ha/leadership.ts';
import { MemoryHaStore } from '../../../src/cluster/ha/memory-ha-store.ts';
import { ManualEnvironment } from '../../support/manual-env.ts';

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

async function leader(m: ManualEnvironment, store: MemoryHaStore, holder: string, leaseMs = 900, takeEnded = false): Promise<Leadership> {
  const l = await elect(store, { job: 'j', holder, leaseMs, address: null, takeEnded }, m.environment, () => {});
  if (l === 'ended') throw new Error('ended');
  return l;
}

describe('Leadership', () => {
  it('the local deadline falls before the store expiry by the margin', () => {
    expect(localDeadline(1_000, 10_000)).toBe(9_000);
    expect(localDeadline(0, 100)).toBe(50);
    expect(localDeadline(0, 36)).toBe(18); // a short lease (the simulator's) keeps half
  });

  it('renews while the store answers; a leader whose renewals stop reaching the store stops acting before its lease can run out there, and is deposed when it has', async () => {
    const m = new ManualEnvironment();
    const store = new MemoryHaStore(m.environment.clock);
    const a = await leader(m, store, 'a');
    const lost: HaError[] = [];
    a.onLost((e) => lost.push(e));
    a.start();
    for (let t = 100; t <= 3_000; t += 100) {
      m.advanceTo(t);
      await flush();
    }
    expect(lost).toEqual([]);
    expect(a.valid).toBe(true);
    // From now on its renewals do not get through (a partition): the store is unchanged, the deadline passes.
    const renew = store.renew.bind(store);
    store.renew = () => new Promise<boolean>(() => {});
    let stoppedActingAt = -1;
    let deposedAt = -1;
    a.onLost(() => (deposedAt = m.environment.clock.now()));
    for (let t = 3_010; t <= 5_000 && deposedAt < 0; t += 10) {
      m.advanceTo(t);
      await flush();
      if (stoppedActingAt < 0 && !a.valid) {
        stoppedActingAt = t;
        // It no longer acts on its own (a publish would wait for the store) while the store still holds its lease.
        expect((await store.leader('j'))!.live).toBe(true);
      }
    }
    expect(stoppedActingAt).toBeGreaterThan(3_000);
    expect(deposedAt).toBeGreaterThan(stoppedActingAt);
    expect(lost[0]?.code).toBe('HA_LEADERSHIP_LOST');
    expect(lost[0]?.message).toContain('no renewal succeeded within the lease (900 ms)');
    store.renew = renew;
    await expect(a.publish(9, '/x/chk-9')).rejects.toThrow(/lost the leadership of job j \(epoch 1\)/);
  });

  it('a leader whose own thread stood still past its local deadline asks the store: the lease still held there, so it goes on (and a publish meanwhile waits for the answer)', async () => {
    const m = new ManualEnvironment();
    const store = new MemoryHaStore(m.environment.clock);
    const a = await leader(m, store, 'a', 900);
    const lost: HaError[] = [];
    a.onLost((e) => lost.push(e));
    a.start();
    // Renewals are answered late (a slow store, or this thread busy), but within the store's lease.
    const renew = store.renew.bind(store);
    let release: (() => void) | null = null;
    store.renew = (...args) =>
      new Promise<boolean>((resolve) => {
        release = () => void renew(...args).then(resolve);
      });
    m.advanceTo(750); // past the local deadline (900 - 180), before the store's end (900)
    await flush();
    expect(a.valid).toBe(false);
    let published = false;
    const publishing = a.publish(1, '/a/chk-1').then(() => (published = true));
    await flush();
    expect(published).toBe(false); // waits for the store's answer
    (release as unknown as () => void)();
    await publishing;
    expect(published).toBe(true);
    expect(a.valid).toBe(true);
    expect(lost).toEqual([]);
    expect(await store.latest('j')).toEqual({ checkpointId: 1, location: '/a/chk-1', epoch: 1 });
  });

  it('a standby waits, says who leads, and takes over with the next epoch once the lease ran out; the old leader is refused at once', async () => {
    const m = new ManualEnvironment();
    const store = new MemoryHaStore(m.environment.clock);
    const a = await leader(m, store, 'a', 600);
    await a.publish(3, '/a/chk-3');
    const seen: string[] = [];
    let b: Leadership | 'ended' | null = null;
    void elect(store, { job: 'j', holder: 'b', leaseMs: 600, address: null }, m.environment, (l) => seen.push(`${l.holder}/${l.epoch}`)).then((x) => (b = x));
    for (let t = 50; t <= 1_000 && b === null; t += 50) {
      m.advanceTo(t);
      await flush();
    }
    expect(seen).toEqual(['a/1']);
    expect(b).not.toBeNull();
    const nb = b as unknown as Leadership;
    expect(nb.epoch).toBe(2);
    expect(await store.latest('j')).toEqual({ checkpointId: 3, location: '/a/chk-3', epoch: 1 });
    // The old leader wakes (it never ran its renewals: a paused process): its pointer is refused.
    const lost: HaError[] = [];
    a.onLost((e) => lost.push(e));
    await expect(a.publish(4, '/a/chk-4')).rejects.toThrow(/lost the leadership/);
    expect(await store.latest('j')).toEqual({ checkpointId: 3, location: '/a/chk-3', epoch: 1 });
    await nb.publish(5, '/b/chk-5');
    expect(await store.latest('j')).toEqual({ checkpointId: 5, location: '/b/chk-5', epoch: 2 });
  });

  it('a standby outlives a store that stops answering (a restart): it asks again at each poll and takes over once it answers; a store that does not answer the first poll is an error', async () => {
    const m = new ManualEnvironment();
    const store = new MemoryHaStore(m.environment.clock);
    await leader(m, store, 'a', 600);
    const acquire = store.acquire.bind(store);
    let down = false;
    store.acquire = (...args) => (down ? Promise.reject(new Error('connection refused')) : acquire(...args));
    const unanswered: string[] = [];
    let b: Leadership | 'ended' | Error | null = null;
    void elect(
      store,
      { job: 'j', holder: 'b', leaseMs: 600, address: null },
      m.environment,
      () => {},
      (err) => unanswered.push((err as Error).message),
    ).then(
      (x) => (b = x),
      (e: Error) => (b = e),
    );
    await flush();
    down = true; // after the standby's first poll: the store restarts for 2 s, longer than the lease
    for (let t = 50; t <= 2_000; t += 50) {
      m.advanceTo(t);
      await flush();
    }
    expect(b).toBeNull();
    expect(unanswered.length).toBeGreaterThan(3);
    down = false;
    for (let t = 2_050; t <= 3_000 && b === null; t += 50) {
      m.advanceTo(t);
      await flush();
    }
    expect((b as unknown as Leadership).epoch).toBe(2);
    down = true;
    await expect(elect(store, { job: 'j', holder: 'c', leaseMs: 600, address: null }, m.environment, () => {})).rejects.toThrow('connection refused');
  });

  it('a standby that watched the job learns that it ended; a later run does nothing unless it asks to run the job again', async () => {
    const m = new ManualEnvironment();
    const store = new MemoryHaStore(m.environment.clock);
    const a = await leader(m, store, 'a', 600);
    let b: Leadership | 'ended' | null = null;
    void elect(store, { job: 'j', holder: 'b', leaseMs: 600, address: null }, m.environment, () => {}).then((x) => (b = x));
    m.advanceTo(100);
    await flush();
    await store.finish('j', 'a', a.epoch);
    for (let t = 200; t <= 1_000 && b === null; t += 100) {
      m.advanceTo(t);
      await flush();
    }
    expect(b).toBe('ended');
    // A later run of an ended job runs nothing, unless it asks to run the job again.
    expect(await elect(store, { job: 'j', holder: 'c', leaseMs: 600, address: null }, m.environment, () => {})).toBe('ended');
    const c = await leader(m, store, 'c', 600, true);
    expect(c.epoch).toBe(2);
  });
});
