/**
 * import-time: what `import 'weir-stream'` costs a fresh process, from the compiled package
 * (dist/, what users run). Interleaved per round: a bare `node` process (the floor) and one that
 * imports the core entry; each child reports its own CPU time (user + system) and wall time at the
 * end of the import, so the figures are the child's, not the spawn's. Also the number of
 * node_modules packages the import loads (connector drivers and lmdb must not be among them).
 * `WEIR_IMPORT_DIST=<dir>` measures another build (e.g. an older tree's dist) the same way.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { buildResult, median, parseScenarioArgs, printResult, writeResult } from '../lib/result.ts';

const SCENARIO = 'import-time';
const args = parseScenarioArgs(process.argv.slice(2));
const dist = resolve(process.env.WEIR_IMPORT_DIST ?? resolve(import.meta.dirname, '../../dist'));
const params = { quick: args.quick, rounds: args.quick ? 2 : 15, dist, statistic: 'median over rounds' };

/** Runs one child that imports `entry` (or nothing) and prints its CPU ms, wall ms and loaded packages. */
function child(entry: string | null): { cpuMs: number; wallMs: number; packages: number } {
  const script = `
const t0 = performance.now();
${entry === null ? '' : `await import(${JSON.stringify(entry)});`}
const wallMs = performance.now();
const u = process.cpuUsage();
const { createRequire } = await import('node:module');
const files = Object.keys(createRequire(import.meta.url).cache);
const packages = new Set(files.map((f) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(f)?.[1]).filter(Boolean));
process.stdout.write(JSON.stringify({ cpuMs: (u.user + u.system) / 1000, wallMs, packages: packages.size }));
`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    cpuMs: number;
    wallMs: number;
    packages: number;
  };
}

const bare: number[] = [];
const core: number[] = [];
const coreWall: number[] = [];
let packages = 0;
for (let r = 0; r < params.rounds; r++) {
  bare.push(child(null).cpuMs);
  const c = child(resolve(dist, 'src/index.js'));
  core.push(c.cpuMs);
  coreWall.push(c.wallMs);
  packages = c.packages;
}
const result = buildResult(
  SCENARIO,
  params,
  {
    bare_node_cpu_ms: median(bare),
    import_cpu_ms: median(core),
    import_wall_ms: median(coreWall),
    import_cpu_ms_above_bare: median(core) - median(bare),
    cjs_packages_loaded: packages,
  },
  { import_vs_bare_cpu: median(core) / median(bare) },
);
printResult(result);
if (args.variants === null) writeResult(result, args.outDir);
