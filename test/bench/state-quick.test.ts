/**
 * Smoke run of the state benchmark in quick mode, through `bench/run.ts` as `npm run bench` runs it.
 * It checks the result file's shape and the ratios' presence; it asserts nothing about timing
 * (the scenario itself throws when a restore or a job's counts are wrong).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

describe('bench state --quick', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'weir-bench-test-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('writes a well-formed result with the three ratios the issue asks for', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'state', '--quick', '--out', outDir], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `bench failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(join(outDir, 'state.json'), 'utf8'));
    expect(Object.keys(result).sort()).toEqual(['cpu', 'date', 'metrics', 'node', 'params', 'ratios', 'scenario']);
    expect(result.scenario).toBe('state');
    expect(result.params.quick).toBe(true);
    for (const figures of [result.metrics, result.ratios]) {
      for (const value of Object.values(figures)) expect(Number.isFinite(value)).toBe(true);
    }
    for (const r of [
      'sync_pause_p99_1m_vs_10k',
      'incremental_vs_full_bytes',
      'embedded_vs_heap_throughput',
      'embedded_vs_heap_throughput_100k',
      'embedded_vs_heap_peak_rss_100k',
    ])
      expect(result.ratios[r]).toBeGreaterThan(0);
    expect(result.metrics.incremental_persisted_bytes_median).toBeLessThan(result.metrics.full_persisted_bytes_median);
    expect(result.metrics.chain_files).toBe(11);
  });
});
