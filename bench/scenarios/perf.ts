/**
 * perf: issue 28's table in one run (`npm run bench -- perf [--quick]`). Runs the scenarios that
 * measure its rows (throughput, state, scaling, stall, and nexmark on the embedded backend), one
 * after another, each in a child process of its own at its own sizes (`--quick` passes through),
 * writing into a directory of this run; then reads their results and prints one table: the figure,
 * the value measured, the goal, met or missed, and where it came from. `bench/results/perf.json`
 * holds every row, each scenario's wall time, and the load average at the start and the end; the
 * scenarios' own result files go under `perf/<scenario>/`. Not part of a plain `npm run bench`
 * (which runs those scenarios anyway).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { runScenarioChild } from '../lib/children.ts';
import { PERF_SCENARIOS, perfTable, type PerfScenario } from '../lib/perf-table.ts';
import { buildResult, formatNumber, formatTable, parseScenarioArgs, publishResult, runScenario, type BenchResult, type Figures } from '../lib/result.ts';

const SCENARIO = 'perf';
const args = parseScenarioArgs(process.argv.slice(2));
if (args.variants !== null) throw new Error('perf: --variants is not supported');

/** Flags of each scenario beyond --quick and --out. */
const EXTRA: Readonly<Record<PerfScenario, readonly string[]>> = {
  throughput: [],
  state: [],
  scaling: [],
  stall: [],
  nexmark: ['--backend', 'embedded'],
};

/** The one result file a scenario wrote into its own fresh directory (nexmark given `--backend` names it after the subset). */
function onlyResult(dir: string, name: string): BenchResult {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new Error(`perf: scenario ${name} wrote ${files.length} result files in ${dir}, expected one`);
  return JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as BenchResult;
}

async function main(): Promise<void> {
  const childOut = join(args.outDir, 'perf');
  const metrics: Figures = { load_average_1m_start: loadavg()[0]! };
  const results: Partial<Record<PerfScenario, BenchResult>> = {};
  for (const name of PERF_SCENARIOS) {
    const started = Date.now();
    console.log(`\n### perf: ${name}`);
    const out = join(childOut, name);
    rmSync(out, { recursive: true, force: true });
    const code = await runScenarioChild(name, [...(args.quick ? ['--quick'] : []), '--out', out, ...EXTRA[name]]);
    if (code !== 0) throw new Error(`scenario ${name} failed (exit ${code})`);
    metrics[`${name}_seconds`] = (Date.now() - started) / 1000;
    metrics[`load_average_1m_after_${name}`] = loadavg()[0]!;
    results[name] = onlyResult(out, name);
  }
  const rows = perfTable(results);
  const ratios: Figures = {};
  rows.forEach((row, i) => {
    metrics[`row_${i + 1}_value`] = row.value;
    metrics[`row_${i + 1}_met`] = row.met ? 1 : 0;
  });
  ratios.rows_met = rows.filter((r) => r.met).length / rows.length;
  metrics.load_average_1m_end = loadavg()[0]!;
  const params = {
    quick: args.quick,
    scenarios: PERF_SCENARIOS,
    rows: rows.map((r, i) => ({ row: i + 1, figure: r.figure, source: r.source, goal: r.goal })),
    statistic: "each row as its scenario measures it (see the scenario's section of BENCHMARKS.md)",
  };
  publishResult(buildResult(SCENARIO, params, metrics, ratios), args.outDir);
  console.log(`\n== issue 28's table (${rows.filter((r) => r.met).length} of ${rows.length} goals met)\n`);
  console.log(
    formatTable(
      ['figure', 'value', 'goal', '', 'from'],
      rows.map((r) => [r.figure, formatNumber(r.value), r.goal, r.met ? 'met' : 'MISSED', r.source]),
    ),
  );
}

runScenario(SCENARIO, main);
