/**
 * Smoke run of the stall benchmark in quick mode, through `bench/run.ts` as `npm run bench` runs it.
 * It checks the result file's shape and that every figure is there; it asserts nothing about timing
 * (the scenario itself throws when a checkpoint persisted fewer keys than were written).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

describe('bench stall --quick', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'weir-bench-test-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('writes a well-formed result with the stall during checkpoints and outside them', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'stall', '--quick', '--out', outDir], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `bench failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(join(outDir, 'stall.json'), 'utf8'));
    expect(Object.keys(result).sort()).toEqual(['cpu', 'date', 'metrics', 'node', 'params', 'ratios', 'scenario']);
    expect(result.scenario).toBe('stall');
    expect(result.params.quick).toBe(true);
    for (const figures of [result.metrics, result.ratios]) {
      for (const value of Object.values(figures)) expect(Number.isFinite(value)).toBe(true);
    }
    for (const m of ['gap_max_ms_checkpoint', 'gap_max_ms_quiet', 'async_ms', 'records_per_sec_checkpoint', 'records_per_sec_quiet'])
      expect(result.metrics[m], m).toBeGreaterThan(0);
    expect(result.metrics.sync_ms).toBeGreaterThanOrEqual(0);
    for (const r of ['stall_vs_quiet', 'throughput_checkpoint_vs_quiet']) expect(result.ratios[r], r).toBeGreaterThan(0);
  });
});
