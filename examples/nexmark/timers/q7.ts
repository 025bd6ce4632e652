/**
 * Nexmark q7, highest bid: per tumbling 10-second window of event time, the bids with the highest
 * price. Bids are keyed by their window; a keyed function keeps the highest price so far with the
 * bids that offered it, and an event-time timer at the window's last millisecond emits them once
 * the watermark has passed it (then clears the state). As in nexmark-flink, each window's bids meet
 * in one subtask. Run: npx tsx examples/nexmark/timers/q7.ts [events] [parallelism]
 */
import { type DataStream, type KeyedProcessFunction, type ValueState, ValueStateDescriptor } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import { windowStart } from '../event-time.ts';
import type { Q7Result } from '../results.ts';
import { isMain, runQuery } from '../run-query.ts';
import { bids } from '../select.ts';

const WINDOW_MS = 10_000;

function highestPerWindow(): KeyedProcessFunction<number, Bid, Q7Result> {
  let best: ValueState<Q7Result[]>;
  return {
    open(ctx) {
      best = ctx.getState(new ValueStateDescriptor<Q7Result[]>('highest-bids'));
    },
    processElement(bid, ctx, _out) {
      const current = best.value();
      const top = current?.[0]?.price ?? -1;
      if (bid.price < top) return;
      const entry = { auction: bid.auction, bidder: bid.bidder, price: bid.price, dateTime: bid.dateTime, extra: bid.extra };
      if (current === undefined) ctx.timerService().registerEventTimeTimer(ctx.currentKey + WINDOW_MS - 1);
      best.update(bid.price > top || current === undefined ? [entry] : [...current, entry]);
    },
    onTimer(_timestampMs, _ctx, out) {
      for (const b of best.value() ?? []) out.collect(b);
      best.clear();
    },
  };
}

/** The highest bids of every 10-second window. */
export function q7(events: DataStream<NexmarkEvent>): DataStream<Q7Result> {
  return events
    .flatMap(bids)
    .name('q7-bids')
    .keyBy((b) => windowStart(b.dateTime, WINDOW_MS))
    .process(highestPerWindow)
    .uid('q7-highest')
    .name('q7-highest');
}

if (isMain(import.meta.url)) await runQuery('q7', q7);
