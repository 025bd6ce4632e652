/**
 * Nexmark q8, monitor new users: persons who registered and opened an auction within the same
 * tumbling 10-second window of event time, once per person and window (a window join). Persons
 * keyed by id and auctions keyed by seller meet in one keyed two-input function that keeps, per
 * window, the person's name if they registered in it and whether they sold in it; an event-time
 * timer at the window's last millisecond emits the match and drops the entry.
 * Run: npx tsx examples/nexmark/timers/q8.ts [events] [parallelism]
 */
import { type DataStream, type KeyedCoProcessFunction, type MapState, MapStateDescriptor } from 'weir-stream';
import type { Auction, NexmarkEvent, Person } from 'weir-stream/nexmark';
import { windowStart } from '../event-time.ts';
import type { Q8Result } from '../results.ts';
import { isMain, runQuery } from '../run-query.ts';
import { auctions, persons } from '../select.ts';

const WINDOW_MS = 10_000;

/** Per window: the name of the person if they registered in it, and whether they opened an auction in it. */
type Seen = [name: string | null, sold: boolean];

function joinPerWindow(): KeyedCoProcessFunction<number, Person, Auction, Q8Result> {
  let windows: MapState<number, Seen>;
  const see = (start: number, name: string | null, sold: boolean, register: (t: number) => void): void => {
    const seen = windows.get(start);
    if (seen === undefined) register(start + WINDOW_MS - 1);
    windows.put(start, [name ?? seen?.[0] ?? null, sold || (seen?.[1] ?? false)]);
  };
  return {
    open(ctx) {
      windows = ctx.getMapState(new MapStateDescriptor<number, Seen>('windows'));
    },
    processElement1(person, ctx, _out) {
      const timers = ctx.timerService();
      see(windowStart(person.dateTime, WINDOW_MS), person.name, false, (t) => timers.registerEventTimeTimer(t));
    },
    processElement2(auction, ctx, _out) {
      const timers = ctx.timerService();
      see(windowStart(auction.dateTime, WINDOW_MS), null, true, (t) => timers.registerEventTimeTimer(t));
    },
    onTimer(timestampMs, ctx, out) {
      const start = timestampMs + 1 - WINDOW_MS;
      const seen = windows.get(start);
      if (seen !== undefined && seen[0] !== null && seen[1]) out.collect({ id: ctx.currentKey, name: seen[0], starttime: start });
      windows.remove(start);
    },
  };
}

/** Persons who opened an auction in the window they registered in. */
export function q8(events: DataStream<NexmarkEvent>): DataStream<Q8Result> {
  return events
    .flatMap(persons)
    .name('q8-persons')
    .keyBy((p) => p.id)
    .connect(
      events
        .flatMap(auctions)
        .name('q8-auctions')
        .keyBy((a) => a.seller),
    )
    .process(joinPerWindow)
    .uid('q8-join')
    .name('q8-join');
}

if (isMain(import.meta.url)) await runQuery('q8', q8);
