/**
 * The simulator's event-time scenario: out-of-order event times, bounded-out-of-orderness
 * watermarks, an idle partition, and event-time timers. Source `a` (one split per subtask, its
 * parallelism and the tag stage's fixed so a rescale moves only the keyed operator) gives record i
 * the event time `10 * j` ± 60 ms (j: its index within its split), so no record is more than 110 ms
 * behind one before it, within the 200 ms bound: no record is ever late, whatever the interleaving,
 * faults, restores and rescales, and the keyed operator reports a late record as a violation (a
 * watermark that overtook data). Source `idle` sends one record after most of the run and marks
 * itself idle until then, so the watermark must advance without it (its record, which may come
 * after the others ended and is then late by design, is emitted as is, without a timer). The keyed operator sums each
 * key's sequence numbers per 100 ms bucket of event time and emits `key@bucket=sum` when the
 * bucket's event-time timer fires; per-key sequence numbers skip replayed records (at-least-once),
 * so every (key, bucket) has one value, that of the fault-free run.
 */
import type { DataStream } from '../../api/data-stream.ts';
import type { StreamEnvironment } from '../../api/environment.ts';
import type { KeyedProcessFunction } from '../../runtime/functions.ts';
import { WatermarkStrategy } from '../../runtime/time/watermark-strategy.ts';
import { MapStateDescriptor, ValueStateDescriptor } from '../../state/descriptors.ts';
import type { MapState, ValueState } from '../../state/state.ts';
import type { SequenceLog, SequenceMode } from './scenarios.ts';
import { seqRecord, type SeqRecord, type SeqSourceSpec } from './sequence-source.ts';

/** A sequence record with its event time. */
export interface TimedSeqRecord extends SeqRecord {
  readonly ts: number;
}

export const EVENT_BUCKET_MS = 100;
export const EVENT_OUT_OF_ORDERNESS_MS = 200;
/** After this long without a record (virtual ms) the idle source marks itself idle. */
export const IDLE_TIMEOUT_MS = 10;
/** The idle source's one record is far ahead in event time: it never holds the watermark back once it came. */
const IDLE_RECORD_TS = 1_000_000_000;

export function eventTimeOf(spec: SeqSourceSpec, i: number): number {
  const j = Math.floor(i / spec.splits);
  return j * 10 + (((i * 104_729) % 13) - 6) * 10;
}

export function timedSource(env: StreamEnvironment, spec: SeqSourceSpec, ratePerSec: number, ts: (i: number) => number): DataStream<TimedSeqRecord> {
  return env
    .generate({ count: spec.count, ratePerSec }, (i): TimedSeqRecord => ({ ...seqRecord(spec, i), ts: ts(i) }))
    .uid(`source-${spec.src}`)
    .name(`source-${spec.src}`)
    .setParallelism(spec.splits);
}

/** Watermarks with a 200 ms bound; the idle source also marks itself idle. */
export function eventTimeStrategy(idle: boolean): WatermarkStrategy<TimedSeqRecord> {
  const s = WatermarkStrategy.forBoundedOutOfOrderness<TimedSeqRecord>(EVENT_OUT_OF_ORDERNESS_MS).withTimestampAssigner((r) => r.ts);
  return idle ? s.withIdleness(IDLE_TIMEOUT_MS) : s;
}

/** The idle source: one record, emitted `afterMs` of virtual time after each (re)start. */
export function idleSource(env: StreamEnvironment, spec: SeqSourceSpec, afterMs: number): DataStream<TimedSeqRecord> {
  return timedSource(env, spec, 1000 / afterMs, () => IDLE_RECORD_TS)
    .assignTimestampsAndWatermarks(eventTimeStrategy(true))
    .uid('timestamps-idle')
    .setParallelism(1);
}

export function bucketSumsFunction(log: SequenceLog, mode: SequenceMode): KeyedProcessFunction<string, TimedSeqRecord, string> {
  let last!: ValueState<number>;
  let sums!: MapState<number, number>;
  return {
    open(ctx) {
      last = ctx.getState(new ValueStateDescriptor<number>('last'));
      sums = ctx.getMapState(new MapStateDescriptor<number, number>('sums'));
    },
    processElement(r, ctx, out) {
      const seen = last.value() ?? 0;
      log.check(mode, `key ${ctx.currentKey}`, seen, r.seq);
      if (r.seq <= seen) return; // replayed (at-least-once): already summed
      last.update(r.seq);
      if (r.origin === 'idle') {
        // Its record may come after the others ended (an idle input's data is late then, by design): no timer.
        out.collect(`${r.key}:${r.seq}`);
        return;
      }
      const ts = ctx.timestamp;
      const timers = ctx.timerService();
      if (ts !== r.ts) log.violations.push(`key ${ctx.currentKey} sequence ${r.seq}: timestamp ${ts}, expected ${r.ts}`);
      else if (ts <= timers.currentWatermark()) {
        if (log.violations.length < 20)
          log.violations.push(`key ${ctx.currentKey} sequence ${r.seq}: late, event time ${ts} <= watermark ${timers.currentWatermark()}`);
      }
      const bucket = Math.floor(r.ts / EVENT_BUCKET_MS);
      sums.put(bucket, (sums.get(bucket) ?? 0) + r.seq);
      timers.registerEventTimeTimer(bucket * EVENT_BUCKET_MS + EVENT_BUCKET_MS - 1);
    },
    onTimer(t, ctx, out) {
      const bucket = Math.floor(t / EVENT_BUCKET_MS);
      out.collect(`${ctx.currentKey}@${bucket}=${sums.get(bucket)}`);
      sums.remove(bucket);
    },
  };
}
