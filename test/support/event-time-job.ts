/**
 * The event-time test job: out-of-order events (each up to 110 ms behind the newest before it),
 * bounded-out-of-orderness watermarks (200 ms), and a keyed function that sums each key's events
 * per 1-second bucket of event time and emits the sum when an event-time timer at the bucket's end
 * fires. No event is ever late, so every (key, bucket) is emitted exactly once with the same sum
 * whatever the interleaving, failures and restores: a plain TypeScript loop is the oracle.
 */
import { MapStateDescriptor, type StreamEnvironment, WatermarkStrategy } from '../../src/index.ts';
import type { KeyedProcessFunction, MapState, TwoPhaseCommitSink } from '../../src/index.ts';
import { heldGenerate, type Hold } from './held-source.ts';

export interface TimedEvent {
  readonly key: string;
  readonly i: number;
  readonly ts: number;
}

export const BUCKET_MS = 1000;
export const OUT_OF_ORDERNESS_MS = 200;
export const BUCKETS_UID = 'bucket-sums';

export function timedEvent(i: number, keys: number): TimedEvent {
  return { key: `k${(i * 7919) % keys}`, i, ts: i * 10 + (((i * 104729) % 13) - 6) * 10 };
}

/**
 * Sums per (key, bucket), emitted as `key:bucket:sum:timerTime:domain` by an event-time timer;
 * `onFire` sees the watermark each timer fired at (in-process tests only).
 */
export function bucketSums(onFire?: (watermarkMs: number) => void, slowMicros = 0): KeyedProcessFunction<string, TimedEvent, string> {
  let sums: MapState<number, number>;
  return {
    open(ctx) {
      sums = ctx.getMapState(new MapStateDescriptor<number, number>('sums'));
    },
    processElement(e, ctx, out) {
      if (slowMicros > 0) spin(slowMicros);
      const ts = ctx.timestamp;
      if (ts === undefined || ts !== e.ts) throw new Error(`event ${e.i} arrived with timestamp ${ts}, expected ${e.ts}`);
      if (ts <= ctx.timerService().currentWatermark()) {
        out.collect(`LATE:${e.i}`);
        return;
      }
      const b = Math.floor(ts / BUCKET_MS);
      sums.put(b, (sums.get(b) ?? 0) + e.i);
      ctx.timerService().registerEventTimeTimer(b * BUCKET_MS + BUCKET_MS - 1);
    },
    onTimer(t, ctx, out) {
      const b = Math.floor(t / BUCKET_MS);
      onFire?.(ctx.timerService().currentWatermark());
      out.collect(`${ctx.currentKey}:${b}:${sums.get(b)}:${ctx.timestamp}:${ctx.timeDomain}`);
      sums.remove(b);
    },
  };
}

export interface EventTimeJobOptions {
  readonly count: number;
  readonly keys: number;
  /** Source subtasks (each reads one split in index order, so out-of-orderness stays bounded). */
  readonly sourceParallelism: number;
  readonly hold?: Hold;
  readonly onFire?: (watermarkMs: number) => void;
  /** Busy-waits this many microseconds per record in the timer operator, so its input channels fill (backpressure). */
  readonly slowMicros?: number;
}

function spin(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end) {
    // a slow operator
  }
}

/** gen (uid 'events') -> timestamps/watermarks -> keyBy(key) -> bucketSums (uid BUCKETS_UID) -> sink (uid 'out'). */
export function buildEventTimeJob(env: StreamEnvironment, sink: TwoPhaseCommitSink<string, unknown>, o: EventTimeJobOptions): void {
  heldGenerate(env, { count: o.count }, (i) => timedEvent(i, o.keys), o.hold ?? {})
    .uid('events')
    .name('gen')
    .setParallelism(o.sourceParallelism)
    .assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness<TimedEvent>(OUT_OF_ORDERNESS_MS).withTimestampAssigner((e) => e.ts))
    .uid('timestamps')
    .setParallelism(o.sourceParallelism)
    .keyBy((e) => e.key)
    .process(() => bucketSums(o.onFire, o.slowMicros))
    .uid(BUCKETS_UID)
    .name('buckets')
    .sinkTo(sink)
    .uid('out');
}

/** What the job emits, sorted. */
export function expectedBucketSums(count: number, keys: number): string[] {
  const sums = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const e = timedEvent(i, keys);
    const k = `${e.key}:${Math.floor(e.ts / BUCKET_MS)}`;
    sums.set(k, (sums.get(k) ?? 0) + i);
  }
  return [...sums]
    .map(([k, sum]) => {
      const b = Number(k.split(':')[1]);
      return `${k}:${sum}:${b * BUCKET_MS + BUCKET_MS - 1}:event-time`;
    })
    .sort();
}
