import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { portLink } from '../../../src/runtime/network/link.ts';
import type { DataMessage } from '../../../src/cluster/transport/protocol.ts';

/** Resolves once `count` messages arrived at `received`. */
function arrivals(received: DataMessage[], count: number, handlerOf: (h: (m: DataMessage) => void) => void): Promise<void> {
  return new Promise((resolve) => {
    handlerOf((m) => {
      received.push(m);
      if (received.length === count) resolve();
    });
  });
}

describe('the worker port link', () => {
  it('posts the messages of one turn as one postMessage, in order, with the frames transferred', async () => {
    const { port1, port2 } = new MessageChannel();
    const a = portLink<DataMessage, DataMessage>(port1);
    const b = portLink<DataMessage, DataMessage>(port2);
    let posts = 0;
    port2.on('message', () => posts++);
    const received: DataMessage[] = [];
    const firstTurn = arrivals(received, 3, (h) => b.onMessage(h));
    const frame = Uint8Array.of(1, 2, 3);
    a.send({ type: 'frame', channel: 4, frame }, [frame.buffer as ArrayBuffer]);
    a.send({ type: 'credit', channel: 5, buffers: 8 });
    a.send({ type: 'frame', channel: 4, frame: Uint8Array.of(9) });
    expect(frame.byteLength).toBe(3); // posted at the end of the turn, not inline
    await firstTurn;
    expect(frame.byteLength).toBe(0); // transferred, not copied
    expect(posts).toBe(1);
    expect(received.map((m) => (m.type === 'frame' ? [m.channel, [...m.frame]] : [m.channel, m.buffers]))).toEqual([
      [4, [1, 2, 3]],
      [5, 8],
      [4, [9]],
    ]);
    const secondTurn = new Promise<void>((resolve) => port2.once('message', () => resolve()));
    a.send({ type: 'credit', channel: 5, buffers: 1 });
    await secondTurn;
    expect(posts).toBe(2);
    a.close();
    b.close();
  });

  it('drops what was sent in the turn it closed', async () => {
    const { port1, port2 } = new MessageChannel();
    const a = portLink<DataMessage, DataMessage>(port1);
    let posts = 0;
    port2.on('message', () => posts++);
    a.send({ type: 'credit', channel: 0, buffers: 1 });
    a.close();
    a.send({ type: 'credit', channel: 0, buffers: 2 });
    // The port is closed on both ends: 'close' comes after anything that was posted.
    await new Promise<void>((resolve) => port2.once('close', () => resolve()));
    expect(posts).toBe(0);
  });
});
