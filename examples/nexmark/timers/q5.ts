/**
 * Nexmark q5, hot items: per sliding window of event time (10 s long, starting every 2 s), the
 * auctions with the most bids. Two keyed steps with event-time timers:
 * 1. bids keyed by auction: a map from window start to the auction's bid count in that window
 *    (each bid counts in the 5 windows that hold it); a timer at a window's last millisecond emits
 *    (auction, count, window start) and drops the entry;
 * 2. those counts keyed by window start: the highest count with its auctions; a timer at the same
 *    millisecond (the counts carry it as their event time, so all have arrived when it fires)
 *    emits every auction with the highest count.
 * Run: npx tsx examples/nexmark/timers/q5.ts [events] [parallelism]
 */
import { type DataStream, type KeyedProcessFunction, type MapState, MapStateDescriptor, type ValueState, ValueStateDescriptor } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import { windowStart } from '../event-time.ts';
import type { Q5Result } from '../results.ts';
import { isMain, runQuery } from '../run-query.ts';
import { bids } from '../select.ts';

const SIZE_MS = 10_000;
const SLIDE_MS = 2_000;

function countPerWindow(): KeyedProcessFunction<number, Bid, Q5Result> {
  let counts: MapState<number, number>;
  return {
    open(ctx) {
      counts = ctx.getMapState(new MapStateDescriptor<number, number>('bids-per-window'));
    },
    processElement(bid, ctx, _out) {
      const timers = ctx.timerService();
      for (let start = windowStart(bid.dateTime, SLIDE_MS); start > bid.dateTime - SIZE_MS; start -= SLIDE_MS) {
        const n = counts.get(start);
        if (n === undefined) timers.registerEventTimeTimer(start + SIZE_MS - 1);
        counts.put(start, (n ?? 0) + 1);
      }
    },
    onTimer(timestampMs, ctx, out) {
      const start = timestampMs + 1 - SIZE_MS;
      out.collect({ auction: ctx.currentKey, num: counts.get(start) ?? 0, starttime: start });
      counts.remove(start);
    },
  };
}

function hottestPerWindow(): KeyedProcessFunction<number, Q5Result, Q5Result> {
  let hottest: ValueState<Q5Result[]>;
  return {
    open(ctx) {
      hottest = ctx.getState(new ValueStateDescriptor<Q5Result[]>('hottest'));
    },
    processElement(count, ctx, _out) {
      const current = hottest.value();
      const top = current?.[0]?.num ?? -1;
      if (count.num < top) return;
      if (current === undefined) ctx.timerService().registerEventTimeTimer(count.starttime + SIZE_MS - 1);
      hottest.update(count.num > top || current === undefined ? [count] : [...current, count]);
    },
    onTimer(_timestampMs, _ctx, out) {
      for (const c of hottest.value() ?? []) out.collect(c);
      hottest.clear();
    },
  };
}

/** The auctions with the most bids in each sliding window. */
export function q5(events: DataStream<NexmarkEvent>): DataStream<Q5Result> {
  return events
    .flatMap(bids)
    .name('q5-bids')
    .keyBy((b) => b.auction)
    .process(countPerWindow)
    .uid('q5-counts')
    .name('q5-counts')
    .keyBy((c) => c.starttime)
    .process(hottestPerWindow)
    .uid('q5-hottest')
    .name('q5-hottest');
}

if (isMain(import.meta.url)) await runQuery('q5', q5);
