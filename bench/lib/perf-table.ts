/**
 * Issue 28's table, from the result files of the scenarios that measure it: each row names the
 * scenario and the figure it comes from, its goal, and whether the measured value meets it. Pure:
 * `bench/scenarios/perf.ts` runs the scenarios and hands their results here.
 */
import { keyTag, type BenchResult } from './result.ts';

/** A figure of the table: where it is read, and its goal. */
interface RowSpec {
  /** `{scale}` and `{large}` stand for the state scenario's key counts of the run (1m and 10m at full size). */
  readonly figure: string;
  readonly scenario: string;
  /** `metrics.<name>` or `ratios.<name>` of the scenario's result (names may carry the run's key counts). */
  readonly from: string | ((params: Readonly<Record<string, unknown>>) => string);
  readonly goal: { readonly atLeast: number } | { readonly atMost: number };
}

/** The Nexmark queries of the table, with the per-core goal each has. */
export const PERF_NEXMARK_QUERIES = ['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q7', 'q8', 'q11'] as const;

/** The scenarios the table reads, in the order they run. */
export const PERF_SCENARIOS = ['throughput', 'state', 'scaling', 'stall', 'nexmark'] as const;
export type PerfScenario = (typeof PERF_SCENARIOS)[number];

const ROWS: readonly RowSpec[] = [
  { figure: 'keyed count p=1, Weir / Map loop, 10 k keys', scenario: 'throughput', from: 'ratios.weir_vs_loop', goal: { atLeast: 0.5 } },
  { figure: 'embedded / heap throughput, 100 k keys', scenario: 'state', from: 'ratios.embedded_vs_heap_throughput', goal: { atLeast: 0.7 } },
  {
    figure: 'embedded / heap records/s at {scale} keys (each alone in a child)',
    scenario: 'state',
    from: (p) => `ratios.embedded_vs_heap_throughput_${keyTag(Number(p.scaleKeys))}`,
    goal: { atLeast: 0.3 },
  },
  {
    figure: 'embedded / heap peak RSS at {scale} keys (each alone in a child)',
    scenario: 'state',
    from: (p) => `ratios.embedded_vs_heap_peak_rss_${keyTag(Number(p.scaleKeys))}`,
    goal: { atMost: 1 },
  },
  {
    figure: 'embedded records/s at {large} keys',
    scenario: 'state',
    from: (p) => `metrics.embedded_records_per_sec_${keyTag(Number(p.largeKeys))}`,
    goal: { atLeast: 200_000 },
  },
  { figure: 'scaling p=2 on two task managers / p=1', scenario: 'scaling', from: 'ratios.scaling_p2_vs_p1', goal: { atLeast: 1.7 } },
  {
    figure: 'longest record gap, full 1 M-key embedded checkpoint, in-thread (ms)',
    scenario: 'stall',
    from: 'metrics.gap_max_ms_checkpoint_in_thread',
    goal: { atMost: 50 },
  },
  { figure: 'the same on two task managers (ms)', scenario: 'stall', from: 'metrics.gap_max_ms_checkpoint_two_tms', goal: { atMost: 50 } },
  ...PERF_NEXMARK_QUERIES.map(
    (q): RowSpec => ({
      figure: `Nexmark ${q}, embedded, events per CPU-s / Flink 1.13 per core`,
      scenario: 'nexmark',
      from: `ratios.nexmark_${q}_vs_flink_per_core`,
      goal: { atLeast: 5 },
    }),
  ),
];

/** One row of the table as measured. */
export interface PerfRow {
  readonly figure: string;
  readonly source: string;
  readonly value: number;
  readonly goal: string;
  readonly met: boolean;
}

/** The table from the scenarios' results; a scenario or figure missing is an error naming it. */
export function perfTable(results: Readonly<Partial<Record<PerfScenario, BenchResult>>>): PerfRow[] {
  return ROWS.map((row) => {
    const result = results[row.scenario as PerfScenario];
    if (result === undefined) throw new Error(`perf: no result of scenario ${row.scenario} (for "${row.figure}")`);
    const from = typeof row.from === 'string' ? row.from : row.from(result.params);
    const [section, name] = from.split('.') as ['metrics' | 'ratios', string];
    const value = result[section][name];
    if (value === undefined) throw new Error(`perf: ${row.scenario}'s result has no ${from} (for "${row.figure}")`);
    const figure = row.figure.replace('{scale}', keyTag(Number(result.params.scaleKeys))).replace('{large}', keyTag(Number(result.params.largeKeys)));
    const met = 'atLeast' in row.goal ? value >= row.goal.atLeast : value <= row.goal.atMost;
    const goal = 'atLeast' in row.goal ? `>= ${row.goal.atLeast}` : `<= ${row.goal.atMost}`;
    return { figure, source: `${row.scenario} ${from}`, value, goal, met };
  });
}
