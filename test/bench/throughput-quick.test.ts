/**
 * Smoke run of the throughput benchmark in quick mode, through `bench/run.ts` as `npm run bench`
 * runs it. It checks the result file's shape and that all four variants computed the same counts;
 * it asserts nothing about timing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const VARIANTS = ['loop', 'weir', 'weir_checkpoint', 'db_ivm'] as const;

describe('bench throughput --quick', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'weir-bench-test-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("writes a well-formed result in which every variant produced the loop's counts", () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'throughput', '--quick', '--out', outDir], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `bench failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('weir_vs_loop');

    const result = JSON.parse(readFileSync(join(outDir, 'throughput.json'), 'utf8'));
    expect(Object.keys(result).sort()).toEqual(['cpu', 'date', 'metrics', 'node', 'params', 'ratios', 'scenario']);
    expect(result.scenario).toBe('throughput');
    expect(new Date(result.date).toISOString()).toBe(result.date);
    expect(result.node).toBe(process.version);
    expect(result.cpu).toMatch(/ x \d+$/);
    expect(result.params).toMatchObject({ quick: true, records: 200_000, vocabulary: 10_000, parallelism: 1 });

    const { metrics, ratios } = result;
    for (const figures of [metrics, ratios]) {
      for (const value of Object.values(figures)) expect(Number.isFinite(value)).toBe(true);
    }
    for (const v of VARIANTS) expect(metrics[`${v}_records_per_sec`]).toBeGreaterThan(0);
    expect(Object.keys(ratios).sort()).toEqual(['checkpointing_vs_off', 'weir_vs_db_ivm', 'weir_vs_loop']);
    for (const value of Object.values(ratios)) expect(value).toBeGreaterThan(0);
    expect(metrics.checkpoints_completed).toBeGreaterThanOrEqual(1);
    expect(metrics.checkpoint_duration_median_ms).toBeGreaterThanOrEqual(0);

    // The scenario already throws on any difference; the digests show it in the file.
    expect(metrics.records).toBe(200_000);
    expect(metrics.weir_updates_out).toBe(200_000);
    expect(metrics.distinct_keys).toBeGreaterThan(9_000);
    expect(metrics.distinct_keys).toBeLessThanOrEqual(10_000);
    const digests = VARIANTS.map((v) => metrics[`${v}_counts_digest`]);
    expect(new Set(digests).size).toBe(1);
  });
});
