/**
 * Running a scenario in a child process of its own (`node --expose-gc --conditions=weir-source
 * --import tsx bench/scenarios/<name>.ts [flags]`), as `bench/run.ts` and the perf scenario do: a
 * fresh process per scenario gives each the same starting point (no grown heap, no JIT feedback
 * shaped by another's call sites, no leftover timers), and a crash cannot take the others with it.
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SCENARIO_DIR = join(BENCH_DIR, 'scenarios');
const REPO_DIR = resolve(BENCH_DIR, '..');

/** Runs scenario `name` with `flags`, its output on ours; resolves to its exit code (128 for a signal). */
export function runScenarioChild(name: string, flags: readonly string[]): Promise<number> {
  const file = join(SCENARIO_DIR, `${name}.ts`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--conditions=weir-source', '--import', 'tsx', file, ...flags], { cwd: REPO_DIR, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolvePromise(signal ? 128 : (code ?? 1)));
  });
}
