/**
 * Real loopback TCP connections for the transport tests: a pair of connected sockets, a few waits
 * bounded by generous timeouts (a broken test fails instead of hanging), and a fast comparison of
 * many messages.
 */
import * as net from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

/** Two connected sockets on 127.0.0.1 ([client, server]); the listener that made them is closed. */
export async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve) => client.once('connect', resolve));
  const serverSide = await accepted;
  server.close();
  return [client, serverSide];
}

/** Resolves with what `subscribe` hands its callback first, or rejects after `ms`. */
export function within<T>(ms: number, what: string, subscribe: (done: (value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    subscribe((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/** A free loopback port: listened on and closed again, so a dial to it is refused. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * `got` equals `expected`, message by message, with node's deep equality (vitest's takes seconds
 * on 20k messages or a 2 MB Uint8Array); the first message that differs is shown.
 */
export function expectSame<T>(got: readonly T[], expected: readonly T[]): void {
  expect(got.length).toBe(expected.length);
  const first = got.findIndex((m, i) => !isDeepStrictEqual(m, expected[i]));
  if (first >= 0) expect({ index: first, message: got[first] }).toEqual({ index: first, message: expected[first] });
}
