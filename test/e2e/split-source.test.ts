import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import type { JobClient } from '../../src/index.ts';
import type { FaultSite } from '../../src/runtime/faults.ts';
import { whenRunning } from '../support/clients.ts';
import { FaultPlan, type PlannedFault } from '../support/fault-plan.ts';
import { baseOptions, keyedCount, sortedCopy, tempDir, until } from '../support/jobs.ts';
import { MemoryLog, MemorySplitSource } from '../support/memory-split-source.ts';

const PARTITIONS = 5;
const PER_PARTITION = 2_000;
const KEYS = 40;

function partitions(): Map<string, readonly string[]> {
  const m = new Map<string, readonly string[]>();
  for (let p = 0; p < PARTITIONS; p++)
    m.set(
      `part${p}`,
      Array.from({ length: PER_PARTITION }, (_, i) => `k${(i * 7919 + p) % KEYS}`),
    );
  return m;
}

function expected(): string[] {
  const counts = new Map<string, number>();
  const out: string[] = [];
  for (const records of partitions().values())
    for (const k of records) {
      const n = (counts.get(k) ?? 0) + 1;
      counts.set(k, n);
      out.push(`${k}:${n}`);
    }
  return out.sort();
}

function build(log: MemoryLog, sink: CollectSink<string>, parallelism: number, dir: string) {
  const env = StreamEnvironment.create(
    baseOptions({ parallelism, checkpointStorage: dir, checkpointing: { intervalMs: 1_000_000, retention: 'retain-on-cancel' } }),
  );
  env
    .fromSource(new MemorySplitSource(log, 50, 300))
    .uid('splits')
    .name('memory-splits')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .name('count')
    .sinkTo(sink)
    .uid('sink');
  return env;
}

/** Raises the readable limit in steps, taking a checkpoint at each (retried across a restart). */
async function stepThrough(client: JobClient, log: MemoryLog, steps: number): Promise<void> {
  await whenRunning(client);
  for (let s = 1; s <= steps; s++) {
    log.limit = (s * PER_PARTITION) / (steps + 1);
    for (;;) {
      try {
        await client.triggerCheckpoint();
        break;
      } catch {
        await whenRunning(client);
      }
    }
  }
  log.limit = Number.POSITIVE_INFINITY;
}

const f = (site: FaultSite, vertex: string, nth: number, subtask?: number): PlannedFault => ({ site, vertex, nth, subtask });

describe('split source in a job (in-memory partitions, keyed count, exactly-once)', () => {
  it.each([
    ['no fault', null],
    ['source poll', f('process', 'memory-splits', 30, 1)],
    ['source sync phase', f('sync-phase', 'memory-splits', 2, 0)],
    ['source before ack', f('before-ack', 'memory-splits', 3, 2)],
    ['keyed count', f('process', 'count', 50, 1)],
    ['sink commit', f('commit', 'count', 2, 0)],
  ] as const)('%s: output is exactly-once and every split is acknowledged at its end', async (_name, fault) => {
    const log = new MemoryLog(partitions());
    const sink = new CollectSink<string>();
    const env = build(log, sink, 3, tempDir());
    const plan = new FaultPlan(fault ? [fault] : []);
    const client = await env.executeAsync('splits', { faults: plan });
    await stepThrough(client, log, 4);
    const result = await client.result;
    expect(plan.fired.length).toBe(fault ? 1 : 0);
    expect(result.restarts).toBe(fault ? 1 : 0);
    expect(sortedCopy(sink.results())).toEqual(expected());
    // every split was acknowledged, finally at its end
    expect([...log.acked.values()]).toEqual(Array.from({ length: PARTITIONS }, () => PER_PARTITION));
  });

  it('rescales 3 -> 2 through a savepoint: each split resumes once, at its savepoint position', async () => {
    const root = tempDir();
    const log = new MemoryLog(partitions());
    const sink = new CollectSink<string>();
    log.limit = 700;
    const first = await build(log, sink, 3, join(root, 'chk')).executeAsync('rescale');
    await whenRunning(first);
    await until('every split read to 700', async () => {
      await first.triggerCheckpoint();
      return log.acked.size === PARTITIONS && [...log.acked.values()].every((p) => p === 700);
    });
    const savepoint = await first.stopWithSavepoint(join(root, 'sp'));
    await first.result;
    log.limit = Number.POSITIVE_INFINITY;
    log.openedWith = [];
    const second = await build(log, sink, 2, join(root, 'chk')).execute('rescale', { restoreFrom: savepoint });
    expect(second.status).toBe('FINISHED');
    const opened = log.openedWith.flatMap((o) => o.splits);
    expect(opened.map(([id]) => id).sort()).toEqual([...partitions().keys()].map((p) => `p:${p}`).sort());
    expect(opened.every(([, position]) => position === 700)).toBe(true);
    expect(new Set(log.openedWith.map((o) => o.subtask))).toEqual(new Set([0, 1]));
    expect(sortedCopy(sink.results())).toEqual(expected());
  });
});
