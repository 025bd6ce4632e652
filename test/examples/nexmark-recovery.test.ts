/**
 * The stateful Nexmark examples through a failure: a task of the query's keyed step fails part-way,
 * the job restarts from its newest checkpoint (or from the start if none completed yet: the answer
 * must be the same either way), and the committed output is still exactly the reference's — the
 * join's list state, window contents, merging-window sets and window timers are restored with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CollectSink, type DataStream, StreamEnvironment } from '../../src/index.ts';
import { type NexmarkEvent, nexmarkEvents } from '../../src/connectors/nexmark/index.ts';
import { nexmarkStream } from '../../examples/nexmark/event-time.ts';
import { q4 } from '../../examples/nexmark/q4.ts';
import { q5 } from '../../examples/nexmark/q5.ts';
import { q11 } from '../../examples/nexmark/q11.ts';
import { q5Reference, q11Reference, q4Reference } from '../support/nexmark-reference.ts';
import { FaultPlan } from '../support/fault-plan.ts';

const OPTIONS = { events: 20_000, eventRatePerSec: 500 };
const events = nexmarkEvents(OPTIONS);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function runWithFault<R>(
  query: (events: DataStream<NexmarkEvent>) => DataStream<R>,
  vertex: string,
  stateBackend: 'heap' | 'embedded',
): Promise<{ output: R[]; restarts: number; fired: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'weir-nexmark-recovery-'));
  dirs.push(dir);
  const env = StreamEnvironment.create({
    parallelism: 2,
    stateBackend,
    checkpointStorage: dir,
    checkpointing: { intervalMs: 20 },
    restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 10 },
  });
  const sink = new CollectSink<R>();
  query(nexmarkStream(env, OPTIONS)).sinkTo(sink);
  const plan = new FaultPlan([{ site: 'process', vertex, subtask: 1, nth: 12 }]);
  const result = await env.execute('nexmark-recovery', { faults: plan });
  expect(result.status).toBe('FINISHED');
  return { output: sink.results(), restarts: result.restarts, fired: plan.fired.length };
}

const bag = (records: readonly unknown[]): string[] => records.map((r) => JSON.stringify(r)).sort();

describe('Nexmark examples through a failure', () => {
  it('q4: the continuous join and per-category averages end at the reference answer (heap)', async () => {
    const { output, restarts, fired } = await runWithFault(q4, 'q4-highest-bids', 'heap');
    expect([fired, restarts]).toEqual([1, 1]);
    const last = new Map<number, number>();
    for (const r of output) last.set(r.category, r.average);
    expect([...last].sort((a, b) => a[0] - b[0])).toEqual(
      q4Reference(events)
        .map((r) => [r.category, r.average])
        .sort((a, b) => a[0]! - b[0]!),
    );
  });

  it('q5: sliding-window counts and the per-window maximum give the reference hot items (embedded)', async () => {
    const { output, restarts, fired } = await runWithFault(q5, 'q5-counts', 'embedded');
    expect([fired, restarts]).toEqual([1, 1]);
    expect(bag(output)).toEqual(bag(q5Reference(events)));
  });

  it('q11: merging session windows give the reference sessions (heap)', async () => {
    const { output, restarts, fired } = await runWithFault(q11, 'q11-sessions', 'heap');
    expect([fired, restarts]).toEqual([1, 1]);
    expect(bag(output)).toEqual(bag(q11Reference(events)));
  });
});
