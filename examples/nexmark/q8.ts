/**
 * Nexmark q8, monitor new users: persons who registered and opened an auction within the same
 * tumbling 10-second window of event time, once per person and window. As nexmark-flink's SQL:
 * the sellers of each window, once each (auctions keyed by seller, reduced per window), joined in
 * the same windows with the persons who registered (a window join on person id).
 * Run: npx tsx examples/nexmark/q8.ts [events] [parallelism]
 */
import { type DataStream, TumblingEventTimeWindows } from 'weir-stream';
import type { NexmarkEvent } from 'weir-stream/nexmark';
import type { Q8Result } from './results.ts';
import { isMain, runQuery } from './run-query.ts';
import { auctions, persons } from './select.ts';

const WINDOW_MS = 10_000;

/** Persons who opened an auction in the window they registered in. */
export function q8(events: DataStream<NexmarkEvent>): DataStream<Q8Result> {
  const sellers = events
    .flatMap(auctions)
    .name('q8-auctions')
    .map((a) => a.seller)
    .name('q8-seller')
    .keyBy((seller) => seller)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .reduce((seller) => seller)
    .uid('q8-sellers')
    .name('q8-sellers');
  return events
    .flatMap(persons)
    .name('q8-persons')
    .join(sellers)
    .where((p) => p.id)
    .equalTo((seller) => seller)
    .window(TumblingEventTimeWindows.of(WINDOW_MS))
    .apply((p): Q8Result => ({ id: p.id, name: p.name, starttime: p.dateTime - (p.dateTime % WINDOW_MS) }))
    .uid('q8-join')
    .name('q8-join');
}

if (isMain(import.meta.url)) await runQuery('q8', q8);
