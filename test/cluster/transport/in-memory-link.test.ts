import { describe, expect, it } from 'vitest';
import { inMemoryLinkPair } from '../../../src/runtime/network/link.ts';
import { fromWireError, toWireError } from '../../../src/cluster/transport/protocol.ts';
import { InjectedFault, StorageError } from '../../../src/core/errors.ts';
import { isExpectedFailure } from '../../../src/sim/world/events.ts';
import { SimWorld } from '../../../src/sim/world/sim-world.ts';

describe('the in-memory link', () => {
  it('is FIFO in each direction on the simulator, whose scheduler runs ready events in any order and holds some back', () => {
    const world = new SimWorld(42, { stepCostMsMax: 0.5, slowProbability: 0.3, slowDelayMsMax: 5 });
    const [a, b] = inMemoryLinkPair<number, string>(world);
    const atB: number[] = [];
    const atA: string[] = [];
    b.onMessage((n) => {
      atB.push(n);
      // Answers while messages the other way are still in flight.
      if (n % 3 === 0) b.send(`r${n}`);
    });
    a.onMessage((s) => atA.push(s));
    for (let i = 0; i < 100; i++) a.send(i);
    // More sends interleaved with deliveries.
    for (let i = 100; i < 200; i++) {
      world.step();
      a.send(i);
    }
    while (world.step()) {}
    expect(atB).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(atA).toEqual(atB.filter((n) => n % 3 === 0).map((n) => `r${n}`));
  });

  it('delivers nothing once closed', () => {
    const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const [a, b] = inMemoryLinkPair<number, number>(world);
    const got: number[] = [];
    b.onMessage((n) => got.push(n));
    a.send(1);
    a.send(2);
    world.step();
    a.close();
    a.send(3);
    while (world.step()) {}
    expect(got).toEqual([1]);
  });

  it('ends as TCP does: a reset drops what is in flight either way and both ends learn it after what they got; an end tells only the other; a close tells nobody', () => {
    const world = new SimWorld(3, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
    const events: string[] = [];
    const pair = () => {
      const [a, b] = inMemoryLinkPair<number, number>(world);
      a.onMessage((n) => events.push(`a got ${n}`));
      b.onMessage((n) => events.push(`b got ${n}`));
      a.onClose((e) => events.push(`a learned: ${e.message}`));
      b.onClose((e) => events.push(`b learned: ${e.message}`));
      return [a, b] as const;
    };
    const [a, b] = pair();
    a.send(1);
    b.send(10);
    world.step();
    world.step();
    a.send(2);
    b.send(20);
    a.reset(new Error('connection reset'));
    expect(events).toEqual(['b got 1', 'a got 10']); // told through the scheduler, never inline
    a.send(3);
    while (world.step()) {}
    expect(events.slice(2).sort()).toEqual(['a learned: connection reset', 'b learned: connection reset']);
    a.reset(new Error('again')); // once
    while (world.step()) {}
    expect(events).toHaveLength(4);

    events.length = 0;
    const [c, d] = pair();
    c.send(1);
    d.end(new Error('its process exited'));
    while (world.step()) {}
    expect(events).toEqual(['a learned: its process exited']);

    events.length = 0;
    const [e] = pair();
    e.send(1);
    e.close();
    while (world.step()) {}
    expect(events).toEqual([]);
  });
});

describe('errors on the wire', () => {
  it('keep their cause chain, and an injected fault or a storage I/O error its class, so the simulator still tells them apart', () => {
    const wrapped = new Error("subtask 0 of 'map': failed", { cause: new Error('snapshot failed', { cause: new InjectedFault('before-ack') }) });
    const back = fromWireError(structuredClone(toWireError(wrapped)));
    expect(back.message).toBe("subtask 0 of 'map': failed");
    const inner = (back.cause as Error).cause;
    expect(inner).toBeInstanceOf(InjectedFault);
    expect((inner as InjectedFault).site).toBe('before-ack');
    expect(isExpectedFailure(back)).toBe(true);
    expect(isExpectedFailure(fromWireError(toWireError(new Error('x', { cause: new StorageError('STORAGE_IO', 'a/b', 'disk full') }))))).toBe(true);
    expect(isExpectedFailure(fromWireError(toWireError(new Error('a bug'))))).toBe(false);
  });
});
