/**
 * channel: the cost of moving buffers between threads, before the threaded runtime uses it.
 * Buffers of `bufferRecords` records shaped like a keyed job's (`{ word, count }` with a key group
 * each) go through, interleaved per round:
 *   - codec: Weir's element codec (msgpack records + raw key groups), encode and decode in one thread;
 *   - clone: structuredClone of the same element (what postMessage would do without a codec);
 *   - json: JSON.stringify/parse of records and key groups (a baseline people reach for);
 *   - worker: the codec's frames posted to a worker thread with their ArrayBuffers transferred,
 *     decoded there and acknowledged by count, 8 frames in flight (records/s end to end).
 * Ratios: codec_vs_clone and codec_vs_json (throughput, higher is better), worker_vs_codec.
 * Hop latency between two threads, one way (half a round trip, timed on this thread's clock),
 * median and 99th percentile over `pings` round trips, one at a time: a number posted on a
 * MessagePort and echoed (what the task managers' links do), and a sequence number stored in a
 * SharedArrayBuffer and answered with Atomics.notify/waitAsync (what a shared-memory ring would do).
 */
import { Worker } from 'node:worker_threads';
import { decodeElement, encodeElement } from '../../src/runtime/network/element-codec.ts';
import type { StreamElement } from '../../src/runtime/elements.ts';
import { buildResult, median, parseScenarioArgs, printResult, startTimer, writeResult } from '../lib/result.ts';
import { zipfKeys } from '../lib/zipf.ts';
import { waitAsync } from '../lib/wait-async.ts';

const SCENARIO = 'channel';
const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  buffers: args.quick ? 2_000 : 40_000,
  bufferRecords: 64,
  rounds: args.quick ? 1 : 5,
  inFlight: 8,
  pings: args.quick ? 200 : 2_000,
  statistic: 'records/s: median over rounds; ratios: median of per-round ratios',
};

function makeBuffers(): StreamElement[] {
  const { keyAt } = zipfKeys(10_000, 1, 7);
  const out: StreamElement[] = [];
  let i = 0;
  for (let b = 0; b < params.buffers; b++) {
    const records: unknown[] = [];
    const keyGroups = new Int32Array(params.bufferRecords);
    for (let r = 0; r < params.bufferRecords; r++, i++) {
      records.push({ word: keyAt(i, 42), count: i % 1000 });
      keyGroups[r] = i % 128;
    }
    out.push({ kind: 'buffer', records, keyGroups, timestamps: null });
  }
  return out;
}

function codecRound(buffers: StreamElement[]): { ms: number; bytes: number } {
  const stop = startTimer();
  let bytes = 0;
  for (const b of buffers) {
    const frame = encodeElement(b);
    bytes += frame.length;
    decodeElement(frame, 'bench');
  }
  return { ms: stop().ms, bytes };
}

function cloneRound(buffers: StreamElement[]): number {
  const stop = startTimer();
  for (const b of buffers) structuredClone(b);
  return stop().ms;
}

function jsonRound(buffers: StreamElement[]): number {
  const stop = startTimer();
  for (const b of buffers) {
    if (b.kind !== 'buffer') continue;
    const text = JSON.stringify([b.records, Array.from(b.keyGroups ?? [])]);
    const [records, kgs] = JSON.parse(text) as [unknown[], number[]];
    void records;
    Int32Array.from(kgs);
  }
  return stop().ms;
}

async function workerRound(buffers: StreamElement[]): Promise<number> {
  // The .mjs entry registers tsx inside the worker, which then loads the TypeScript codec.
  const worker = new Worker(new URL('../lib/decode-worker.mjs', import.meta.url));
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  const stop = startTimer();
  const batch = 16;
  let sent = 0;
  let acked = 0;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (sent < buffers.length && sent - acked < params.inFlight * batch) {
        const frames = buffers.slice(sent, sent + batch).map((b) => encodeElement(b).buffer as ArrayBuffer);
        worker.postMessage(frames, frames);
        sent += frames.length;
      }
    };
    worker.on('message', (n: number) => {
      acked += n;
      if (acked >= buffers.length) resolve();
      else pump();
    });
    pump();
  });
  const ms = stop().ms;
  await worker.terminate();
  return ms;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** One-way hop latencies in µs: [port median, port p99, shared median, shared p99]. */
async function hopRound(): Promise<[number, number, number, number]> {
  const worker = new Worker(new URL('../lib/decode-worker.mjs', import.meta.url));
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  const port: number[] = [];
  for (let i = 0; i < params.pings; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      worker.once('message', () => resolve());
      worker.postMessage(i);
    });
    port.push(((performance.now() - t0) * 1000) / 2);
  }
  const slots = new Int32Array(new SharedArrayBuffer(8));
  worker.postMessage(slots.buffer);
  const shared: number[] = [];
  for (let seq = 1; seq <= params.pings; seq++) {
    const t0 = performance.now();
    Atomics.store(slots, 0, seq);
    Atomics.notify(slots, 0);
    while (Atomics.load(slots, 1) !== seq) {
      const r = waitAsync(slots, 1, seq - 1);
      if (r.async) await r.value;
    }
    shared.push(((performance.now() - t0) * 1000) / 2);
  }
  Atomics.store(slots, 0, -1);
  Atomics.notify(slots, 0);
  await worker.terminate();
  return [median(port), percentile(port, 0.99), median(shared), percentile(shared, 0.99)];
}

async function main(): Promise<void> {
  const buffers = makeBuffers();
  const records = params.buffers * params.bufferRecords;
  const codec: number[] = [];
  const clone: number[] = [];
  const json: number[] = [];
  const worker: number[] = [];
  const hops: Array<[number, number, number, number]> = [];
  let bytesPerRecord = 0;
  codecRound(buffers.slice(0, 200)); // warm-up
  for (let round = 1; round <= params.rounds; round++) {
    const c = codecRound(buffers);
    bytesPerRecord = c.bytes / records;
    codec.push(records / (c.ms / 1000));
    clone.push(records / (cloneRound(buffers) / 1000));
    json.push(records / (jsonRound(buffers) / 1000));
    worker.push(records / ((await workerRound(buffers)) / 1000));
    hops.push(await hopRound());
    console.error(
      `[channel] round ${round}/${params.rounds}: codec ${Math.round(codec.at(-1)!)} rec/s, clone ${Math.round(clone.at(-1)!)}, json ${Math.round(json.at(-1)!)}, worker ${Math.round(worker.at(-1)!)}, hop µs port/shared ${hops
        .at(-1)!
        .map((x) => x.toFixed(0))
        .join(' ')}`,
    );
  }
  const ratio = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]!));
  const result = buildResult(
    SCENARIO,
    params,
    {
      codec_records_per_s: median(codec),
      codec_bytes_per_s: median(codec) * bytesPerRecord,
      clone_records_per_s: median(clone),
      json_records_per_s: median(json),
      worker_records_per_s: median(worker),
      worker_bytes_per_s: median(worker) * bytesPerRecord,
      bytes_per_record: bytesPerRecord,
      hop_port_median_us: median(hops.map((h) => h[0])),
      hop_port_p99_us: median(hops.map((h) => h[1])),
      hop_shared_median_us: median(hops.map((h) => h[2])),
      hop_shared_p99_us: median(hops.map((h) => h[3])),
    },
    { codec_vs_clone: ratio(codec, clone), codec_vs_json: ratio(codec, json), worker_vs_codec: ratio(worker, codec) },
  );
  printResult(result);
  console.error(`written to ${writeResult(result, args.outDir)}`);
}

await main();
