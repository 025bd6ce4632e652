/**
 * The Nexmark example queries (examples/nexmark) on a small bounded run — 20,000 events at
 * parallelism 2 — give the answer of the plain reference computation over the same events
 * (test/support/nexmark-reference.ts), compared as multisets where the query's output has no order.
 */
import { describe, expect, it } from 'vitest';
import { CollectSink, type DataStream, StreamEnvironment } from '../../src/index.ts';
import { type NexmarkEvent, type NexmarkOptions, nexmarkEvents } from '../../src/connectors/nexmark/index.ts';
import { nexmarkStream } from '../../examples/nexmark/event-time.ts';
import { q0 } from '../../examples/nexmark/q0.ts';
import { q1 } from '../../examples/nexmark/q1.ts';
import { q2 } from '../../examples/nexmark/q2.ts';
import { q3 } from '../../examples/nexmark/q3.ts';
import { q4 } from '../../examples/nexmark/q4.ts';
import { q5 } from '../../examples/nexmark/q5.ts';
import { q7 } from '../../examples/nexmark/q7.ts';
import { q8 } from '../../examples/nexmark/q8.ts';
import { q11 } from '../../examples/nexmark/q11.ts';
import { q5 as q5Timers } from '../../examples/nexmark/timers/q5.ts';
import { q7 as q7Timers } from '../../examples/nexmark/timers/q7.ts';
import { q8 as q8Timers } from '../../examples/nexmark/timers/q8.ts';
import { q11 as q11Timers } from '../../examples/nexmark/timers/q11.ts';
import {
  q0Reference,
  q1Reference,
  q2Reference,
  q3Reference,
  q4Reference,
  q5Reference,
  q7Reference,
  q8Reference,
  q11Reference,
} from '../support/nexmark-reference.ts';

const EVENTS = 20_000;
const events = nexmarkEvents({ events: EVENTS });
/** For the windowed queries: 500 events per second of event time, so 20,000 events span 40 s (4 tumbling windows, 20 sliding ones). */
const SLOW = { events: EVENTS, eventRatePerSec: 500 };
const slowEvents = nexmarkEvents(SLOW);

async function run<R>(query: (events: DataStream<NexmarkEvent>) => DataStream<R>, options: NexmarkOptions = { events: EVENTS }): Promise<R[]> {
  const env = StreamEnvironment.create({ parallelism: 2 });
  const sink = new CollectSink<R>();
  query(nexmarkStream(env, options)).sinkTo(sink);
  const result = await env.execute('nexmark-test');
  expect(result.status).toBe('FINISHED');
  return sink.results();
}

/** A multiset as a sorted list of JSON strings. */
const bag = (records: readonly unknown[]): string[] => records.map((r) => JSON.stringify(r)).sort();

describe('Nexmark example queries against the reference', () => {
  it('q0 passes every bid through', async () => {
    const out = await run(q0);
    const expected = q0Reference(events);
    expect(expected.length).toBe(18_400);
    expect(bag(out)).toEqual(bag(expected));
  });

  it('q1 converts every price to euros', async () => {
    expect(bag(await run(q1))).toEqual(bag(q1Reference(events)));
  });

  it('q2 selects the bids on every 123rd auction', async () => {
    const expected = q2Reference(events);
    expect(expected.length).toBeGreaterThan(10);
    expect(bag(await run(q2))).toEqual(bag(expected));
  });

  it('q3 joins local sellers with their category-10 auctions, each match once', async () => {
    const expected = q3Reference(events);
    expect(expected.length).toBeGreaterThan(10);
    expect(bag(await run(q3))).toEqual(bag(expected));
  });

  it('q4 ends with the reference average closing price of every category', async () => {
    const out = await run(q4);
    const last = new Map<number, number>();
    for (const r of out) last.set(r.category, r.average);
    const expected = q4Reference(events);
    expect(expected.length).toBe(5);
    expect([...last].sort((a, b) => a[0] - b[0])).toEqual(expected.map((r) => [r.category, r.average]).sort((a, b) => a[0]! - b[0]!));
  });

  it('q5 emits the auctions with the most bids of every sliding window', async () => {
    const expected = q5Reference(slowEvents);
    expect(new Set(expected.map((r) => r.starttime)).size).toBe(24);
    expect(bag(await run(q5, SLOW))).toEqual(bag(expected));
  });

  it('q7 emits the highest bids of every tumbling window', async () => {
    const expected = q7Reference(slowEvents);
    expect(new Set(expected.map((r) => Math.floor(r.dateTime / 10_000))).size).toBe(4);
    expect(bag(await run(q7, SLOW))).toEqual(bag(expected));
  });

  it('q8 emits the persons who opened an auction in the window they registered in', async () => {
    const expected = q8Reference(slowEvents);
    expect(new Set(expected.map((r) => r.starttime)).size).toBe(4);
    expect(bag(await run(q8, SLOW))).toEqual(bag(expected));
  });

  it('q11 emits every bidder session with its bid count', async () => {
    const expected = q11Reference(slowEvents);
    expect(expected.some((s) => s.bidCount > 1)).toBe(true);
    expect(expected.some((s) => s.bidCount === 1)).toBe(true);
    expect(bag(await run(q11, SLOW))).toEqual(bag(expected));
  });

  it('q5, q7, q8 and q11 written with keyed functions and timers instead of windows give the same answers', async () => {
    expect(bag(await run(q5Timers, SLOW))).toEqual(bag(q5Reference(slowEvents)));
    expect(bag(await run(q7Timers, SLOW))).toEqual(bag(q7Reference(slowEvents)));
    expect(bag(await run(q8Timers, SLOW))).toEqual(bag(q8Reference(slowEvents)));
    expect(bag(await run(q11Timers, SLOW))).toEqual(bag(q11Reference(slowEvents)));
  });
});
