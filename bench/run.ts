/**
 * `npm run bench [-- SCENARIO...] [--quick] [--out DIR]`: runs the named scenarios in
 * bench/scenarios (all when none is named), one after another.
 *
 * Each scenario runs in its own child process (`node --expose-gc --conditions=weir-source --import
 * tsx bench/scenarios/<name>.ts [flags]`; the condition makes the examples' `import 'weir-stream'`, which the
 * nexmark scenario runs, load the sources as the scenario itself does) rather than in this one: a scenario leaves behind a grown
 * heap, JIT feedback shaped by its own call sites (a megamorphic key selector in one scenario slows
 * the next) and maybe timers or handles; a fresh process gives every scenario the same starting
 * point, and a crash or `process.exit` in one cannot take the others with it. `--expose-gc` lets a
 * scenario collect garbage between interleaved variants so one variant's garbage is not billed to
 * the next. Scenarios run sequentially, never in parallel, so they do not compete for cores.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const SCENARIO_DIR = join(BENCH_DIR, 'scenarios');
const REPO_DIR = resolve(BENCH_DIR, '..');

/** Flags with a value that one scenario understands (nexmark's), passed through to it. */
const SCENARIO_FLAGS = ['--query', '--events', '--backend', '--variants'];

function availableScenarios(): string[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -'.ts'.length))
    .sort();
}

interface RunArgs {
  readonly scenarios: string[];
  /** Passed through to every scenario. */
  readonly flags: string[];
}

function parseArgs(argv: readonly string[], known: readonly string[]): RunArgs {
  const scenarios: string[] = [];
  const flags: string[] = [];
  let scenarioFlags = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') flags.push(arg);
    else if (SCENARIO_FLAGS.includes(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      flags.push(arg, value);
      scenarioFlags = true;
    } else if (arg === '--out') {
      const dir = argv[++i];
      if (!dir) throw new Error('--out needs a directory');
      flags.push('--out', resolve(dir));
    } else if (arg.startsWith('-')) throw new Error(`unknown flag ${arg} (known: --quick, --out DIR, and for one scenario ${SCENARIO_FLAGS.join(', ')})`);
    else if (!known.includes(arg)) throw new Error(`unknown scenario ${JSON.stringify(arg)} (known: ${known.join(', ')})`);
    else scenarios.push(arg);
  }
  if (scenarioFlags && scenarios.length !== 1) throw new Error(`${SCENARIO_FLAGS.join(', ')} belong to one scenario: name exactly one`);
  return { scenarios: scenarios.length > 0 ? scenarios : [...known], flags };
}

function runScenario(name: string, flags: readonly string[]): Promise<number> {
  const file = join(SCENARIO_DIR, `${name}.ts`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--conditions=weir-source', '--import', 'tsx', file, ...flags], { cwd: REPO_DIR, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolvePromise(signal ? 128 : (code ?? 1)));
  });
}

async function main(): Promise<void> {
  const known = availableScenarios();
  const { scenarios, flags } = parseArgs(process.argv.slice(2), known);
  const failed: string[] = [];
  for (const name of scenarios) {
    const started = Date.now();
    console.log(`\n### ${name}${flags.length ? ` ${flags.join(' ')}` : ''}`);
    const code = await runScenario(name, flags);
    console.log(`### ${name}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    if (code !== 0) failed.push(name);
  }
  if (failed.length > 0) {
    console.error(`\nfailed scenarios: ${failed.join(', ')}`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(2);
});
