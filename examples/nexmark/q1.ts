/**
 * Nexmark q1, currency conversion: every bid with its price in euros (0.908 per dollar).
 * Run: npx tsx examples/nexmark/q1.ts [events] [parallelism]
 */
import type { Collector, DataStream } from 'weir-stream';
import type { NexmarkEvent } from 'weir-stream/nexmark';
import type { Q1Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';

const EUROS_PER_DOLLAR = 0.908;

function convert(e: NexmarkEvent, out: Collector<Q1Result>): void {
  if (e.type === 'bid') out.collect({ auction: e.auction, bidder: e.bidder, price: e.price * EUROS_PER_DOLLAR, dateTime: e.dateTime, extra: e.extra });
}

/** The bids, prices converted. */
export function q1(events: DataStream<NexmarkEvent>): DataStream<Q1Result> {
  return events.flatMap(convert).name('q1-convert');
}

if (isMain(import.meta.url)) await runQuery('q1', q1);
