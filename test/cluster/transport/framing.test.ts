/**
 * Frames over real loopback sockets: one turn's frames leave in one corked writev (and without
 * the cork the same writes are many), a 10 MB frame, a stream written one byte at a time, the
 * frame limit, both ends told once of a close or a reset, and the frame handler replaced from
 * inside a handler without losing or reordering frames.
 */
import { randomBytes } from 'node:crypto';
import type * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type FramedSocket, framedSocket } from '../../../src/cluster/transport/framing.ts';
import { ClusterError, ProtocolError } from '../../../src/core/errors.ts';
import { socketPair, within } from './loopback.ts';

const open: net.Socket[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.destroy();
});

async function pair(opts?: { maxFrameBytes?: number }): Promise<{ a: FramedSocket; b: FramedSocket; rawA: net.Socket; rawB: net.Socket }> {
  const [rawA, rawB] = await socketPair();
  open.push(rawA, rawB);
  return { a: framedSocket(rawA, opts), b: framedSocket(rawB, opts), rawA, rawB };
}

/** Collects `count` frames (copied) from `f`. */
function receive(f: FramedSocket, count: number): Promise<Uint8Array[]> {
  const got: Uint8Array[] = [];
  return within(30_000, `${count} frames`, (done) =>
    f.onFrame((frame) => {
      got.push(frame.slice());
      if (got.length === count) done(got);
    }),
  );
}

/** Counts the calls of the socket's write path (_write for one chunk, _writev for several). */
function countWrites(socket: net.Socket): { write: number; writev: number } {
  const calls = { write: 0, writev: 0 };
  const s = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  const write = s._write.bind(socket);
  const writev = s._writev.bind(socket);
  s._write = (...args) => {
    calls.write++;
    return write(...args);
  };
  s._writev = (...args) => {
    calls.writev++;
    return writev(...args);
  };
  return calls;
}

/** A 5-byte frame carrying i. */
const frame = (i: number): Uint8Array => Uint8Array.of(i & 0xff, (i >> 8) & 0xff, 7, 7, 7);

describe('framedSocket', () => {
  it('writes the frames of one turn, small and large, as one corked writev, and each later turn as one more', async () => {
    const { a, b, rawA } = await pair();
    const calls = countWrites(rawA);
    const arrived = receive(b, 303);
    const large = (i: number): Uint8Array => new Uint8Array(10_000).fill(i);
    for (let i = 0; i < 200; i++) {
      a.write(frame(i));
      if (i % 100 === 50) a.write(large(i)); // written as it is, between batches of copied small frames
    }
    expect(calls).toEqual({ write: 0, writev: 0 }); // corked until the end of the turn
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual({ write: 0, writev: 1 });
    for (let i = 200; i < 300; i++) a.write(frame(i));
    a.write(large(1));
    const got = await arrived;
    expect(calls).toEqual({ write: 0, writev: 2 });
    const small = got.filter((f) => f.byteLength === 5);
    expect(small.map((f) => f[0]! | (f[1]! << 8))).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(got.map((f) => f.byteLength).indexOf(10_000)).toBe(51);
    expect([a.framesSent, b.framesReceived]).toEqual([303, 303]);
    expect([a.bytesSent, b.bytesReceived]).toEqual([300 * 9 + 3 * 10_004, 300 * 9 + 3 * 10_004]);
  });

  it('(control) the same writes straight to the socket, uncorked, take many calls', async () => {
    const [rawA, rawB] = await socketPair();
    open.push(rawA, rawB);
    const calls = countWrites(rawA);
    for (let i = 0; i < 200; i++) rawA.write(frame(i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.write + calls.writev).toBeGreaterThan(10);
  });

  it('carries a 10 MB frame whole, in a buffer of its own', async () => {
    const { a, b } = await pair();
    const big = new Uint8Array(randomBytes(10 * 1024 * 1024));
    const arrived = within(30_000, 'the big frame', (done: (f: Uint8Array) => void) => b.onFrame(done));
    a.write(big);
    a.write(Uint8Array.of(1));
    const got = await arrived;
    expect(got.byteLength).toBe(big.byteLength);
    expect(got.byteOffset).toBe(0);
    expect(got.buffer.byteLength).toBe(big.byteLength);
    expect(Buffer.from(got).equals(Buffer.from(big))).toBe(true);
  });

  it('reassembles frames written to the socket one byte at a time', async () => {
    const [rawA, rawB] = await socketPair();
    open.push(rawA, rawB);
    const b = framedSocket(rawB);
    const frames = [Uint8Array.of(1, 2, 3), new Uint8Array(0), Uint8Array.from({ length: 40 }, (_, i) => i), Uint8Array.of(255)];
    const bytes = Buffer.concat(frames.flatMap((f) => [Buffer.from([0, 0, 0, f.byteLength]), Buffer.from(f)]));
    const arrived = receive(b, frames.length);
    let chunks = 0;
    rawB.prependListener('data', () => chunks++);
    for (const byte of bytes) {
      rawA.write(Uint8Array.of(byte));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await arrived).map((f) => [...f])).toEqual(frames.map((f) => [...f]));
    expect(chunks).toBeGreaterThan(1);
  });

  it('closes with a ProtocolError naming the size and the peer when a length is over the limit', async () => {
    const { a, b } = await pair({ maxFrameBytes: 1000 });
    b.onFrame(() => {});
    const closedB = within(30_000, 'b closed', (done: (e: Error | null) => void) => b.onClose(done));
    const closedA = within(30_000, 'a closed', (done: (e: Error | null) => void) => a.onClose(done));
    a.maxFrameBytes = 10_000;
    a.write(new Uint8Array(5000));
    const err = await closedB;
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err!.message).toContain('5000 bytes');
    expect(err!.message).toContain('over the limit of 1000 bytes');
    expect(err!.message).toContain(a.remote.replace(/:\d+$/, ''));
    expect(err!.message).toContain(b.remote);
    expect(await closedA).toBeInstanceOf(ClusterError);
    expect(() => b.write(new Uint8Array(1001))).not.toThrow(); // closed: dropped
  });

  it('refuses to write a frame over its own limit', async () => {
    const { a } = await pair({ maxFrameBytes: 1000 });
    expect(() => a.write(new Uint8Array(1001))).toThrow(ProtocolError);
  });

  it('tells both ends once when one end closes: null here, CLUSTER_CONNECTION_LOST there', async () => {
    const { a, b } = await pair();
    const calls = { a: [] as Array<Error | null>, b: [] as Array<Error | null> };
    const closedA = within(30_000, 'a closed', (done: (e: Error | null) => void) =>
      a.onClose((e) => {
        calls.a.push(e);
        done(e);
      }),
    );
    b.onFrame(() => {});
    const closedB = within(30_000, 'b closed', (done: (e: Error | null) => void) =>
      b.onClose((e) => {
        calls.b.push(e);
        done(e);
      }),
    );
    a.write(Uint8Array.of(1));
    a.close();
    a.close();
    await Promise.all([closedA, closedB]);
    await new Promise((resolve) => setTimeout(resolve, 20)); // a second call would come by now
    expect(calls.a).toEqual([null]);
    expect(calls.b).toHaveLength(1);
    expect(calls.b[0]).toBeInstanceOf(ClusterError);
    expect((calls.b[0] as ClusterError).code).toBe('CLUSTER_CONNECTION_LOST');
    expect(calls.b[0]!.message).toContain('the peer closed the connection');
    expect(a.closed && b.closed).toBe(true);
    // Once per connection: a handler set after the report is not called again.
    b.onClose((e) => calls.b.push(e));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.b).toHaveLength(1);
  });

  it('reports an end that happened before any close handler was set, to the first one set', async () => {
    const { a, b } = await pair();
    b.onFrame(() => {});
    a.close();
    await within(30_000, 'b closed', (done: (v: null) => void) => {
      const poll = (): unknown => (b.closed ? done(null) : setTimeout(poll, 5));
      poll();
    });
    const err = await within(30_000, 'late handler', (done: (e: Error | null) => void) => b.onClose(done));
    expect((err as ClusterError).code).toBe('CLUSTER_CONNECTION_LOST');
  });

  it('reports a reset as CLUSTER_CONNECTION_LOST with the socket error as cause', async () => {
    const { b, rawA } = await pair();
    b.onFrame(() => {});
    const closedB = within(30_000, 'b closed', (done: (e: Error | null) => void) => b.onClose(done));
    rawA.resetAndDestroy();
    const err = (await closedB) as ClusterError;
    expect(err.code).toBe('CLUSTER_CONNECTION_LOST');
    expect((err.cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
  });

  it('hands the next frame to a handler set from inside a handler, and queues frames while none is set', async () => {
    const { a, b } = await pair();
    for (let i = 0; i < 6; i++) a.write(frame(i));
    const seen: string[] = [];
    const rest = within(30_000, 'the rest', (done: (v: null) => void) => {
      b.onFrame((f) => {
        seen.push(`first:${f[0]}`);
        b.onFrame((g) => {
          seen.push(`second:${g[0]}`);
          if (g[0] === 2) {
            b.onFrame(null); // queue 3, 4, 5
            done(null);
          }
        });
      });
    });
    await rest;
    await new Promise((resolve) => setTimeout(resolve, 20)); // a frame wrongly delivered would be seen by now
    expect(seen).toEqual(['first:0', 'second:1', 'second:2']);
    const third = receive(b, 3);
    expect((await third).map((f) => f[0])).toEqual([3, 4, 5]);
  });

  it('queues frames that arrive before any handler is set', async () => {
    const { a, b } = await pair();
    for (let i = 0; i < 3; i++) a.write(frame(i));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await receive(b, 3)).map((f) => f[0])).toEqual([0, 1, 2]);
  });
});
