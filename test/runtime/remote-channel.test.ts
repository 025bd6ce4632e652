import { describe, expect, it } from 'vitest';
import type { CheckpointBarrier } from '../../src/checkpoint/barrier/barrier.ts';
import { checkpointId } from '../../src/core/ids.ts';
import type { StreamElement } from '../../src/runtime/elements.ts';
import { END_OF_DATA } from '../../src/runtime/elements.ts';
import { RemoteInputChannel, RemoteOutputChannel } from '../../src/runtime/network/remote-channel.ts';

const buffer = (...records: number[]): StreamElement => ({ kind: 'buffer', records, keyGroups: Int32Array.from(records.map((r) => r % 7)), timestamps: null });
const barrier = (id: number, alignment: 'aligned' | 'unaligned'): CheckpointBarrier => ({
  kind: 'barrier',
  checkpointId: checkpointId(id),
  timestamp: 1000 + id,
  options: { kind: 'checkpoint', alignment, alignedTimeoutMs: null, isFinal: false },
});

/** A producer's end and a consumer's end, frames and credits delivered when `deliver` is called (as a transport would, later). */
function pair(capacity: number) {
  const frames: Uint8Array[] = [];
  const credits: number[] = [];
  const out = new RemoteOutputChannel('0.0->1.0#0', capacity, (f) => frames.push(f));
  const input = new RemoteInputChannel('0.0->1.0#0', capacity, (n) => credits.push(n));
  let wakes = 0;
  out.setProducer({ onAvailable: () => wakes++ });
  const deliver = () => {
    for (const f of frames.splice(0)) input.receive(f);
    for (const n of credits.splice(0)) out.addCredit(n);
  };
  return { out, input, frames, deliver, wakes: () => wakes };
}

const records = (e: StreamElement | undefined) => (e?.kind === 'buffer' ? e.records : e?.kind);

describe('remote channel ends', () => {
  it('send nothing before open, then only as many data buffers as the consumer has credit for; events take none', () => {
    const { out, input, frames, deliver, wakes } = pair(2);
    out.push(buffer(1));
    expect(frames).toHaveLength(0);
    out.open();
    out.push(buffer(2));
    out.push(buffer(3));
    out.push(END_OF_DATA);
    expect(frames).toHaveLength(2);
    expect(out.hasCredit()).toBe(false);
    expect(out.queued).toBe(2);
    deliver();
    expect(input.size).toBe(2);
    expect(records(input.poll())).toEqual([1]);
    deliver(); // one credit back: buffer 3 and the event behind it go out, which uses it up
    expect(wakes()).toBe(0);
    deliver();
    expect([records(input.poll()), records(input.poll()), records(input.poll())]).toEqual([[2], [3], 'end-of-data']);
    deliver();
    expect(out.hasCredit()).toBe(true);
    expect(wakes()).toBeGreaterThan(0);
  });

  it('an unaligned barrier overtakes unsent buffers at the producer and received ones at the consumer; both are returned as in-flight data', () => {
    const { out, input, deliver } = pair(2);
    out.open();
    for (const r of [1, 2, 3, 4]) out.push(buffer(r));
    deliver(); // 1 and 2 arrive; 3 and 4 wait for credit
    const atProducer = out.overtakeWith(barrier(5, 'unaligned'));
    expect(atProducer.map((b) => (b.kind === 'buffer' ? b.records : b.kind))).toEqual([[3], [4]]);
    deliver(); // the barrier needs no credit and overtakes 1 and 2 on arrival
    expect(input.peek()).toMatchObject({ kind: 'barrier', checkpointId: 5 });
    expect(input.takeOvertaken(5)?.map((b) => (b.kind === 'buffer' ? b.records : b.kind))).toEqual([[1], [2]]);
    expect(input.takeOvertaken(5)).toBeNull();
    const seen: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const e = input.poll();
      if (e) seen.push(e.kind === 'barrier' ? `barrier ${e.checkpointId}` : records(e));
      deliver();
    }
    expect(seen).toEqual(['barrier 5', [1], [2], [3], [4]]);
  });

  it('an unaligned barrier that overtook received buffers and is then pulled forward returns those buffers as in-flight data', () => {
    // The first barrier on another channel started the checkpoint, so the task takes this one out of
    // the queue instead of polling it (found by the simulator, seed 200 over 2 task managers).
    const { out, input, deliver } = pair(4);
    out.open();
    out.push(buffer(1));
    out.push(buffer(2));
    deliver();
    expect(out.overtakeWith(barrier(3, 'unaligned'))).toEqual([]);
    deliver();
    expect(input.pullForward(3)?.map(records)).toEqual([[1], [2]]);
    expect(input.takeOvertaken(3)).toBeNull();
    expect([records(input.poll()), records(input.poll()), input.poll()]).toEqual([[1], [2], undefined]);
  });

  it('an aligned barrier stays in order behind the buffers, and can be pulled forward from the consumer queue', () => {
    const { out, input, deliver } = pair(4);
    out.open();
    out.push(buffer(1));
    out.push(barrier(2, 'aligned'));
    out.push(buffer(3));
    deliver();
    expect(input.takeOvertaken(2)).toBeNull();
    expect(input.pullForward(2)?.map((b) => (b.kind === 'buffer' ? b.records : b.kind))).toEqual([[1]]);
    expect([records(input.poll()), records(input.poll())]).toEqual([[1], [3]]);
  });

  it('credit goes back a quarter of the window at a time, and a producer that used it all gets it back once the consumer drained', () => {
    const { out, input, deliver, wakes } = pair(8);
    out.open();
    for (let r = 1; r <= 8; r++) out.push(buffer(r));
    expect(out.hasCredit()).toBe(false);
    deliver();
    const credits: number[] = [];
    const counting = new RemoteInputChannel('c', 8, (n) => credits.push(n));
    for (let r = 1; r <= 5; r++) counting.receive(new RemoteOutputChannelProbe().frameOf(buffer(r)));
    for (let r = 1; r <= 5; r++) counting.poll();
    expect(credits).toEqual([2, 2]); // the fifth waits for a sixth
    input.poll();
    deliver();
    expect(out.hasCredit()).toBe(false); // one freed: not announced yet
    for (let i = 0; i < 7; i++) input.poll();
    expect(input.size).toBe(0);
    deliver();
    expect(out.hasCredit()).toBe(true);
    expect(wakes()).toBe(1);
    for (let r = 9; r <= 16; r++) out.push(buffer(r));
    deliver();
    expect(input.size).toBe(8);
  });

  it('restored in-flight buffers at the consumer give no credit back when they are freed', () => {
    const credits: number[] = [];
    const input = new RemoteInputChannel('c', 2, (n) => credits.push(n));
    input.push(buffer(9));
    input.poll();
    expect(credits).toEqual([]);
    input.receive(new RemoteOutputChannelProbe().frameOf(buffer(1)));
    input.poll();
    expect(credits).toEqual([1]);
  });
});

/** Encodes one element the way the producer's end does. */
class RemoteOutputChannelProbe {
  frameOf(e: StreamElement): Uint8Array {
    let frame: Uint8Array | null = null;
    const out = new RemoteOutputChannel('c', 1, (f) => (frame = f));
    out.open();
    out.push(e);
    return frame!;
  }
}
