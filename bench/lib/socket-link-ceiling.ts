/**
 * The ceiling of the TCP transport, not a scenario: messages/s and MB/s that one socketLink moves
 * one way over loopback, for 64 KiB `frame` messages and for small `credit` messages, between two
 * processes (a receiver child and this process sending), through the real handshake. The sender
 * keeps a window of messages in flight that the receiver's credits reopen, as channels do, so
 * neither side buffers without bound. MB/s counts the bytes on the wire (frame headers and msgpack
 * included). Run: `node --import tsx bench/lib/socket-link-ceiling.ts [credits|frames]`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { generateClusterToken } from '../../src/cluster/transport/cluster-token.ts';
import { dialPeer, listenPeers } from '../../src/cluster/transport/handshake.ts';
import type { DataMessage } from '../../src/cluster/transport/protocol.ts';
import { socketLink } from '../../src/cluster/transport/socket-link.ts';

interface Case {
  readonly name: string;
  readonly messages: number;
  readonly window: number;
  readonly message: (i: number) => DataMessage;
}

const payload = new Uint8Array(64 * 1024).map((_, i) => i & 0xff);
const CASES: readonly Case[] = [
  { name: '64 KiB frames', messages: 20_000, window: 256, message: (i) => ({ type: 'frame', channel: i & 7, frame: payload }) },
  { name: 'credits', messages: 1_000_000, window: 16_384, message: (i) => ({ type: 'credit', channel: i & 7, buffers: 4 }) },
];

/** Receiver: admits one peer, counts messages, and sends a credit back every quarter window and for the last message. */
async function receive(token: string, window: number, total: number): Promise<void> {
  const listener = await listenPeers({
    host: '127.0.0.1',
    port: 0,
    token,
    tls: null,
    insecure: false,
    handshakeTimeoutMs: 10_000,
    weirVersion: 'bench',
    admit: () => ({ welcome: {} }),
    onPeer: (framed) => {
      const link = socketLink<DataMessage, DataMessage>(framed);
      const every = Math.max(1, window / 4);
      let unacked = 0;
      let received = 0;
      link.onMessage(() => {
        received++;
        if (++unacked === every || received === total) {
          link.send({ type: 'credit', channel: 0, buffers: unacked });
          unacked = 0;
        }
      });
      link.onClose(() => void listener.close().then(() => process.exit(0)));
    },
  });
  process.stdout.write(`${listener.port}\n`);
}

/** Sender: streams the case's messages within the window and times them until the last credit returns. */
async function send(c: Case, token: string): Promise<{ seconds: number; bytes: number }> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'receive', token, String(c.window), String(c.messages)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const { framed } = await dialPeer({
    host: '127.0.0.1',
    port: Number(line.toString().trim()),
    token,
    tls: null,
    role: 'data',
    body: {},
    weirVersion: 'bench',
    timeoutMs: 10_000,
  });
  const link = socketLink<DataMessage, DataMessage>(framed);
  let credited = 0;
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      while (sent < c.messages && sent - credited < c.window) link.send(c.message(sent++));
    };
    link.onMessage((m) => {
      if (m.type === 'credit') credited += m.buffers;
      if (credited === c.messages) resolve();
      else if (sent - credited < c.window / 2) setImmediate(pump);
    });
    pump();
  });
  const seconds = (performance.now() - start) / 1000;
  const bytes = link.traffic().bytesSent;
  link.close();
  await once(child, 'exit');
  return { seconds, bytes };
}

async function main(): Promise<void> {
  if (process.argv[2] === 'receive') return receive(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]));
  const token = generateClusterToken();
  const only = process.argv.slice(2);
  for (const c of CASES.filter((c) => only.length === 0 || only.some((o) => c.name.includes(o)))) {
    const { seconds, bytes } = await send(c, token);
    const line = `${c.name}: ${c.messages} messages in ${seconds.toFixed(2)} s = ${Math.round(c.messages / seconds).toLocaleString('en')} msg/s, ${(bytes / seconds / 1e6).toFixed(1)} MB/s on the wire`;
    process.stdout.write(`${line}\n`);
  }
}

await main();
