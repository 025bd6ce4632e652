/**
 * Smoke run of the Nexmark benchmark in quick mode, through `bench/run.ts` as `npm run bench` runs
 * it: every query on both backends, a well-formed result file with the Flink ratios, and the
 * result counts the reference computations give for the same 20,000 events. Nothing about timing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nexmarkEvents } from '../../src/connectors/nexmark/index.ts';
import { q0Reference, q2Reference, q3Reference, q5Reference, q7Reference, q8Reference, q11Reference } from '../support/nexmark-reference.ts';
import { NEXMARK_QUERIES } from '../../bench/lib/nexmark-queries.ts';

describe('bench nexmark --quick', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'weir-bench-nexmark-test-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('runs every query on heap and embedded and writes per-core figures and Flink ratios', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'nexmark', '--quick', '--out', outDir], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(run.status, `bench failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(join(outDir, 'nexmark.json'), 'utf8'));
    expect(result.scenario).toBe('nexmark');
    expect(result.params).toMatchObject({ quick: true, parallelism: 1, checkpointIntervalMs: 10_000, checkpointMode: 'exactly-once' });
    const names = NEXMARK_QUERIES.map((q) => q.name);
    expect(result.params.queries).toEqual(names);
    for (const q of names) {
      for (const backend of ['heap', 'embedded']) {
        expect(result.metrics[`nexmark_${q}_${backend}_events`]).toBe(20_000);
        expect(result.metrics[`nexmark_${q}_${backend}_events_per_cpu_sec`]).toBeGreaterThan(0);
        expect(result.metrics[`nexmark_${q}_${backend}_checkpoints`]).toBeGreaterThanOrEqual(1);
      }
      expect(result.ratios[`nexmark_${q}_vs_flink_per_core`]).toBeGreaterThan(0);
      expect(result.ratios[`nexmark_${q}_heap_vs_flink_per_core`]).toBeGreaterThan(0);
    }
    const events = nexmarkEvents({ events: 20_000 });
    for (const backend of ['heap', 'embedded']) {
      expect(result.metrics[`nexmark_q0_${backend}_results`]).toBe(q0Reference(events).length);
      expect(result.metrics[`nexmark_q2_${backend}_results`]).toBe(q2Reference(events).length);
      expect(result.metrics[`nexmark_q3_${backend}_results`]).toBe(q3Reference(events).length);
      expect(result.metrics[`nexmark_q5_${backend}_results`]).toBe(q5Reference(events).length);
      expect(result.metrics[`nexmark_q7_${backend}_results`]).toBe(q7Reference(events).length);
      expect(result.metrics[`nexmark_q8_${backend}_results`]).toBe(q8Reference(events).length);
      expect(result.metrics[`nexmark_q11_${backend}_results`]).toBe(q11Reference(events).length);
    }
  }, 300_000);
});
