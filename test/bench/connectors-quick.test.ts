/**
 * Smoke run of the connectors benchmark in quick mode against the local PostgreSQL, Redis and NATS, through
 * `bench/run.ts` as `npm run bench` runs it. It checks the result file's shape and that both
 * variants ran; it asserts nothing about speed (the scenario itself throws when a table does not
 * hold exactly the rows it wrote).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

describe('bench connectors --quick', () => {
  const outDir = mkdtempSync(join(tmpdir(), 'weir-bench-test-'));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('writes a well-formed result with pg2pc_vs_plain and the Redis and NATS figures', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'connectors', '--quick', '--out', outDir], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `bench failed:\n${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(readFileSync(join(outDir, 'connectors.json'), 'utf8'));
    expect(result.scenario).toBe('connectors');
    expect(result.params.quick).toBe(true);
    expect(result.metrics.pg2pc_rows_per_sec).toBeGreaterThan(0);
    expect(result.metrics.plain_rows_per_sec).toBeGreaterThan(0);
    expect(result.ratios.pg2pc_vs_plain).toBeGreaterThan(0);
    for (const system of ['redis', 'nats']) {
      for (const variant of ['source', 'sink', 'plain']) expect(result.metrics[`${system}_${variant}_msgs_per_sec`]).toBeGreaterThan(0);
      expect(result.ratios[`${system}_sink_vs_plain`]).toBeGreaterThan(0);
    }
  });
});
