/**
 * The scaling benchmark's job module (each task manager loads it): a keyed count with a keyBy
 * shuffle. Record i is key `k<(i * 7919) mod KEYS>`; the count emits [key, n]; the sink counts what
 * it gets. SCALING_RECORDS sets the number of records. With SCALING_THREAD_STATS naming a file, each
 * sink subtask appends one JSON line there when it closes: where its thread's wall time went from
 * its first record to (about) its last (thread-stats.ts), sampled every 8,192 records. With
 * SCALING_CHECKSUM naming a file instead, each sink subtask appends `{"records":r,"countSum":s}`
 * when it closes, s the sum of the counts it received: whatever the order and placement, every key
 * with c records contributes 1 + 2 + ... + c, so the sums over all subtasks must add up to the
 * hand-computed total (the tcp scenario's check that no record was lost, doubled or miscounted).
 */
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { type StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { Sink, SinkWriter, ValueState } from '../../src/index.ts';
import { sampleThread, sharesBetween, type ThreadSample } from './thread-stats.ts';

export const KEYS = 10_000;

const SAMPLE_EVERY = 8192;

/** A writer that only samples its thread (the sink operator counts the records: sinkRecordsIn). */
function sampledWriter(file: string): SinkWriter<[string, number]> {
  let records = 0;
  let first: ThreadSample | null = null;
  let last: ThreadSample | null = null;
  return {
    write() {
      if (records++ % SAMPLE_EVERY === 0) {
        last = sampleThread();
        first ??= last;
      }
    },
    close() {
      if (first === null || last === null || last === first) return;
      appendFileSync(file, `${JSON.stringify({ threadId, records, ...sharesBetween(first, last) })}\n`);
    },
  };
}

/** A writer that sums the counts it receives and reports the sum when it closes. */
function checksumWriter(file: string): SinkWriter<[string, number]> {
  let records = 0;
  let countSum = 0;
  return {
    write(value) {
      records++;
      countSum += value[1];
    },
    close() {
      appendFileSync(file, `${JSON.stringify({ records, countSum })}\n`);
    },
  };
}

const countingSink: Sink<[string, number]> = {
  name: 'counting-sink',
  kind: 'plain',
  createWriter: () => {
    const file = process.env.SCALING_THREAD_STATS;
    if (file) return sampledWriter(file);
    const checksum = process.env.SCALING_CHECKSUM;
    if (checksum) return checksumWriter(checksum);
    return {
      write() {
        // counted by the sink operator (sinkRecordsIn)
      },
    };
  },
};

export default function build(env: StreamEnvironment): void {
  const records = Number(process.env.SCALING_RECORDS ?? 1_000_000);
  env
    .generate({ count: records }, (i) => `k${(i * 7919) % KEYS}`)
    .uid('keys')
    .keyBy((k) => k)
    .process(() => {
      let count: ValueState<number>;
      return {
        open(ctx) {
          count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
        },
        processElement(key: string, _ctx, out) {
          const n = count.value()! + 1;
          count.update(n);
          out.collect([key, n] as [string, number]);
        },
      };
    })
    .uid('count')
    .sinkTo(countingSink)
    .uid('sink');
}
