/**
 * The Nexmark example queries (examples/nexmark) on a small bounded run — 20,000 events at
 * parallelism 2 — give the answer of the plain reference computation over the same events
 * (test/support/nexmark-reference.ts), compared as multisets where the query's output has no order.
 */
import { describe, expect, it } from 'vitest';
import { CollectSink, type DataStream, type NexmarkEvent, NexmarkSource, nexmarkEvents, StreamEnvironment } from '../../src/index.ts';
import { q0 } from '../../examples/nexmark/q0.ts';
import { q1 } from '../../examples/nexmark/q1.ts';
import { q2 } from '../../examples/nexmark/q2.ts';
import { q3 } from '../../examples/nexmark/q3.ts';
import { q4 } from '../../examples/nexmark/q4.ts';
import { q0Reference, q1Reference, q2Reference, q3Reference, q4Reference } from '../support/nexmark-reference.ts';

const EVENTS = 20_000;
const events = nexmarkEvents({ events: EVENTS });

async function run<R>(query: (events: DataStream<NexmarkEvent>) => DataStream<R>, options: { events?: number; parallelism?: number } = {}): Promise<R[]> {
  const env = StreamEnvironment.create({ parallelism: options.parallelism ?? 2 });
  const sink = new CollectSink<R>();
  query(env.fromSource(new NexmarkSource({ events: options.events ?? EVENTS })).uid('nexmark')).sinkTo(sink);
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
});
