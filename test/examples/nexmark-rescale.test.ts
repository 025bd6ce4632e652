/**
 * The Nexmark source and the windowed and joined queries through a stop-with-savepoint at
 * parallelism 2 and a resume at parallelism 3: the source's split positions, open session
 * windows with their merging sets and timers, and the join's waiting auctions move with their key
 * groups, and the committed output of both runs (one sink: the resumed run re-commits what the
 * savepoint pre-committed, idempotently) is the reference answer exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CollectSink, type DataStream, type Source, StreamEnvironment, WatermarkStrategy } from '../../src/index.ts';
import { type NexmarkEvent, NexmarkSource, nexmarkEvents } from '../../src/connectors/nexmark/index.ts';
import { OUT_OF_ORDERNESS_MS } from '../../examples/nexmark/event-time.ts';
import { q3 } from '../../examples/nexmark/q3.ts';
import { q11 } from '../../examples/nexmark/q11.ts';
import { q3Reference, q11Reference } from '../support/nexmark-reference.ts';
import { HeldSource, SourceGate } from '../support/held-source.ts';

const OPTIONS = { events: 20_000, eventRatePerSec: 500 };
const events = nexmarkEvents(OPTIONS);
const root = mkdtempSync(join(tmpdir(), 'weir-nexmark-rescale-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function build<R>(parallelism: number, dir: string, source: Source<NexmarkEvent>, query: (e: DataStream<NexmarkEvent>) => DataStream<R>, sink: CollectSink<R>) {
  const env = StreamEnvironment.create({ parallelism, checkpointStorage: join(root, dir), restartStrategy: { type: 'none' } });
  const watermarks = WatermarkStrategy.forBoundedOutOfOrderness<NexmarkEvent>(OUT_OF_ORDERNESS_MS).withTimestampAssigner((e) => e.dateTime);
  query(env.fromSource(source, 'nexmark', { watermarks }).uid('nexmark'))
    .sinkTo(sink)
    .uid('sink');
  return env;
}

/** Runs `query` at parallelism 2 until each source subtask read 4,000 events, stops it with a savepoint, resumes it at 3. */
async function stopAndResume<R>(name: string, query: (e: DataStream<NexmarkEvent>) => DataStream<R>): Promise<{ atStop: number; output: R[] }> {
  const sink = new CollectSink<R>();
  const gate = new SourceGate(4_000);
  const first = build(2, `${name}-a`, new HeldSource(new NexmarkSource(OPTIONS), { gate }), query, sink);
  const client = await first.executeAsync(`${name}-p2`);
  await gate.reached(2);
  const savepoint = await client.stopWithSavepoint(join(root, `${name}-sp`));
  expect((await client.result).status).toBe('FINISHED');
  const atStop = sink.results().length;
  const second = build(3, `${name}-b`, new NexmarkSource(OPTIONS), query, sink);
  const result = await second.execute(`${name}-p3`, { restoreFrom: savepoint });
  expect(result.status).toBe('FINISHED');
  return { atStop, output: sink.results() };
}

const bag = (records: readonly unknown[]): string[] => records.map((r) => JSON.stringify(r)).sort();

describe('Nexmark queries rescaled 2 -> 3 through a savepoint', () => {
  it('q11: sessions open at the savepoint continue at the new parallelism; every session exactly once', async () => {
    const expected = q11Reference(events);
    const { atStop, output } = await stopAndResume('q11', q11);
    expect(atStop).toBeLessThan(expected.length);
    expect(bag(output)).toEqual(bag(expected));
  });

  it('q3: the join state moves with its key groups; every match exactly once', async () => {
    const expected = q3Reference(events);
    const { atStop, output } = await stopAndResume('q3', q3);
    expect(atStop).toBeGreaterThan(0);
    expect(atStop).toBeLessThan(expected.length);
    expect(bag(output)).toEqual(bag(expected));
  });
});
