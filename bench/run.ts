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
import { readdirSync } from 'node:fs';
import { runScenarioChild, SCENARIO_DIR } from './lib/children.ts';
import { resolve } from 'node:path';

/** Flags with a value that one scenario understands (nexmark's), passed through to it. */
const SCENARIO_FLAGS = ['--query', '--events', '--backend', '--variants'];

/** Scenarios made of other scenarios' runs, left out of "every scenario". */
const AGGREGATES = ['perf'];

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
  // perf runs other scenarios again to make one table: only when named.
  return { scenarios: scenarios.length > 0 ? scenarios : known.filter((k) => !AGGREGATES.includes(k)), flags };
}

async function main(): Promise<void> {
  const known = availableScenarios();
  const { scenarios, flags } = parseArgs(process.argv.slice(2), known);
  const failed: string[] = [];
  for (const name of scenarios) {
    const started = Date.now();
    console.log(`\n### ${name}${flags.length ? ` ${flags.join(' ')}` : ''}`);
    const code = await runScenarioChild(name, flags);
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
