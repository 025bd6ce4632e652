/**
 * The benchmark result format (DESIGN.md "Benchmarks") and the helpers every scenario shares:
 * command-line flags, machine description, medians, writing `bench/results/<scenario>.json`
 * atomically, and printing a plain-text table.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export type Figures = Record<string, number>;

/** One scenario's figures, as written to `bench/results/<scenario>.json`. */
export interface BenchResult {
  readonly scenario: string;
  /** ISO 8601, when the scenario finished. */
  readonly date: string;
  readonly node: string;
  /** CPU model and logical core count, e.g. "AMD EPYC x 2". */
  readonly cpu: string;
  readonly params: Record<string, unknown>;
  readonly metrics: Figures;
  readonly ratios: Figures;
}

export interface ScenarioArgs {
  readonly quick: boolean;
  /** Directory the result file goes to (default bench/results). */
  readonly outDir: string;
  /**
   * `--variants a,b`: run only these variants (for profiling one of them). Ratios then cannot be
   * formed, so a scenario run this way prints its per-round lines and writes no result file.
   */
  readonly variants: readonly string[] | null;
}

export const DEFAULT_RESULTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'results');

/** `--quick`, `--out DIR` and `--variants a,b`; anything else is an error, so a typo never runs the full size by accident. */
export function parseScenarioArgs(argv: readonly string[]): ScenarioArgs {
  let quick = false;
  let outDir = DEFAULT_RESULTS_DIR;
  let variants: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--out') {
      const dir = argv[++i];
      if (!dir) throw new Error('--out needs a directory');
      outDir = resolve(dir);
    } else if (arg === '--variants') {
      const list = argv[++i];
      if (!list) throw new Error('--variants needs a comma-separated list');
      variants = list.split(',').filter(Boolean);
    } else throw new Error(`unknown argument ${JSON.stringify(arg)} (known: --quick, --out DIR, --variants a,b)`);
  }
  return { quick, outDir, variants };
}

export function machineCpu(): string {
  const all = cpus();
  return `${all[0]?.model.trim() ?? 'unknown'} x ${all.length}`;
}

/** A key count as figures' names carry it: 10k, 100k, 1m, 10m. */
export function keyTag(keys: number): string {
  return keys >= 1_000_000 && keys % 1_000_000 === 0 ? `${keys / 1_000_000}m` : `${Math.round(keys / 1000)}k`;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function buildResult(scenario: string, params: Record<string, unknown>, metrics: Figures, ratios: Figures): BenchResult {
  for (const [name, value] of [...Object.entries(metrics), ...Object.entries(ratios)]) {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`${scenario}: figure ${name} is not a finite number: ${value}`);
  }
  return { scenario, date: new Date().toISOString(), node: process.version, cpu: machineCpu(), params, metrics, ratios };
}

/** Writes `<outDir>/<scenario>.json` via a temporary name, so a crash never leaves half a file. */
export function writeResult(result: BenchResult, outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, `${result.scenario}.json`);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(tmp, path);
  return path;
}

/** Formats a number for humans: thousands separators, at most 3 decimals for small values. */
export function formatNumber(value: number): string {
  if (Number.isInteger(value) || Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumFractionDigits: 3 });
}

/** A left-aligned first column and right-aligned others, separated by two spaces. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Prints the scenario's metrics and ratios as two tables. */
export function printResult(result: BenchResult): void {
  const out: string[] = [];
  out.push(`\n== ${result.scenario}  (${result.cpu}, node ${result.node}, ${result.date})`);
  out.push(`params: ${JSON.stringify(result.params)}`);
  out.push('');
  out.push(
    formatTable(
      ['metric', 'value'],
      Object.entries(result.metrics).map(([k, v]) => [k, formatNumber(v)]),
    ),
  );
  if (Object.keys(result.ratios).length > 0) {
    out.push('');
    out.push(
      formatTable(
        ['ratio', 'value'],
        Object.entries(result.ratios).map(([k, v]) => [k, v.toFixed(3)]),
      ),
    );
  }
  console.log(out.join('\n'));
}

export interface Elapsed {
  /** Wall time. */
  readonly ms: number;
  /** CPU time of this process (user + system, all threads): less sensitive to other load on the machine. */
  readonly cpuMs: number;
}

/** Starts a wall and CPU clock; call the result to read both. */
export function startTimer(): () => Elapsed {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
  };
}

/** Seconds with ms precision from a performance.now() difference, for progress lines. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)}s`;
}

/** Prints a scenario's result and writes it under `outDir`. */
export function publishResult(result: BenchResult, outDir: string): void {
  const path = writeResult(result, outDir);
  printResult(result);
  console.log(`\nwritten to ${path}`);
}

/** Runs a scenario's main; a failure is printed with the scenario's name and exits 1. */
export function runScenario(scenario: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(`[${scenario}] FAILED:`, err);
    process.exit(1);
  });
}
