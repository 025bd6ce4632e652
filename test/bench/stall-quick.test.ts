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

  it('writes a well-formed result with the stall during checkpoints and outside them, in-thread and on two task managers', () => {
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
    for (const variant of ['in_thread', 'two_tms']) {
      for (const m of ['gap_max_ms_checkpoint', 'gap_max_ms_quiet', 'async_ms', 'records_per_sec_quiet'])
        expect(result.metrics[`${m}_${variant}`], `${m}_${variant}`).toBeGreaterThan(0);
      expect(result.metrics[`sync_ms_${variant}`]).toBeGreaterThanOrEqual(0);
      expect(result.ratios[`stall_vs_quiet_${variant}`]).toBeGreaterThan(0);
    }
    // Task managers report records with their heartbeats (every second): a quick run's short
    // checkpoint may see none, so only the in-thread throughput ratio must be positive.
    expect(result.ratios.throughput_checkpoint_vs_quiet_in_thread).toBeGreaterThan(0);
  });
});
