/** The perf scenario's table (issue 28): rows read from the scenarios' results, goals judged, missing figures named. */
import { describe, expect, it } from 'vitest';
import { perfTable, type PerfScenario } from '../../bench/lib/perf-table.ts';
import type { BenchResult } from '../../bench/lib/result.ts';

function result(scenario: string, params: Record<string, unknown>, metrics: Record<string, number>, ratios: Record<string, number>): BenchResult {
  return { scenario, date: '2026-12-05T00:00:00Z', node: 'v20', cpu: 'test x 2', params, metrics, ratios };
}

const QUERIES = ['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q7', 'q8', 'q11'];

function results(over: { weirVsLoop?: number; gapInThread?: number; omit?: string } = {}): Partial<Record<PerfScenario, BenchResult>> {
  const nexmark: Record<string, number> = {};
  QUERIES.forEach((q, i) => {
    nexmark[`nexmark_${q}_vs_flink_per_core`] = 4 + i;
  });
  const state = result(
    'state',
    { scaleKeys: 100_000, largeKeys: 200_000 },
    { embedded_records_per_sec_200k: 250_000 },
    { embedded_vs_heap_throughput: 0.6, embedded_vs_heap_throughput_100k: 0.35, embedded_vs_heap_peak_rss_100k: 1.4 },
  );
  if (over.omit !== undefined) delete state.ratios[over.omit];
  return {
    throughput: result('throughput', {}, {}, { weir_vs_loop: over.weirVsLoop ?? 0.39 }),
    state,
    scaling: result('scaling', {}, {}, { scaling_p2_vs_p1: 1.3 }),
    stall: result('stall', {}, { gap_max_ms_checkpoint_in_thread: over.gapInThread ?? 109, gap_max_ms_checkpoint_two_tms: 40 }, {}),
    nexmark: result('nexmark', {}, {}, nexmark),
  };
}

describe('perf table', () => {
  it("has every row of the issue's table, judged against its goal, with figure names from the run's sizes", () => {
    const rows = perfTable(results());
    expect(rows).toHaveLength(8 + QUERIES.length);
    const by = (start: string) => rows.find((r) => r.figure.startsWith(start))!;
    expect(by('keyed count')).toMatchObject({ value: 0.39, goal: '>= 0.5', met: false, source: 'throughput ratios.weir_vs_loop' });
    expect(by('embedded / heap records/s')).toMatchObject({ value: 0.35, met: true, source: 'state ratios.embedded_vs_heap_throughput_100k' });
    expect(by('embedded / heap peak RSS')).toMatchObject({
      value: 1.4,
      goal: '<= 1',
      met: false,
      figure: 'embedded / heap peak RSS at 100k keys (each alone in a child)',
    });
    expect(by('embedded records/s at 200k')).toMatchObject({ value: 250_000, met: true, source: 'state metrics.embedded_records_per_sec_200k' });
    expect(by('longest record gap')).toMatchObject({ value: 109, met: false });
    expect(by('the same on two')).toMatchObject({ value: 40, met: true });
    expect(rows.filter((r) => r.figure.startsWith('Nexmark')).map((r) => r.met)).toEqual([false, true, true, true, true, true, true, true, true]);
    expect(perfTable(results({ weirVsLoop: 0.5, gapInThread: 50 })).filter((r) => r.met).length).toBe(rows.filter((r) => r.met).length + 2);
  });

  it('names the scenario and the figure that is missing', () => {
    expect(() => perfTable(results({ omit: 'embedded_vs_heap_peak_rss_100k' }))).toThrowError(
      'perf: state\'s result has no ratios.embedded_vs_heap_peak_rss_100k (for "embedded / heap peak RSS at {scale} keys (each alone in a child)")',
    );
    const { stall: _, ...noStall } = results();
    expect(() => perfTable(noStall)).toThrowError(/no result of scenario stall/);
  });
});
