/**
 * Summarises a V8 .cpuprofile by self time: the top functions, and the share of each area
 * (Weir's src/, the bench's own code, db-ivm, Node internals, GC and idle).
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/scenarios/throughput.ts --quick --out /tmp/prof
 *   node --import tsx bench/profile-summary.ts /tmp/prof/CPU.*.cpuprofile [TOP=10] [--area src]
 */
import { readFileSync } from 'node:fs';
import { formatTable } from './lib/result.ts';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  /** Microseconds before each sample. */
  readonly timeDeltas: readonly number[];
}

function area(url: string, name: string): string {
  if (name === '(garbage collector)') return 'gc';
  if (name === '(idle)' || name === '(program)' || name === '(root)') return 'idle/program';
  if (url.includes('/node_modules/@tanstack/db-ivm/')) return 'db-ivm';
  if (url.includes('/node_modules/')) return 'other node_modules';
  if (url.includes('/src/')) return 'src';
  if (url.includes('/bench/')) return 'bench';
  return 'node internals';
}

function location(url: string, line: number): string {
  if (!url) return '';
  const short = url.replace(/^file:\/\//, '').replace(/^.*?\/(src|bench|node_modules)\//, '$1/');
  return `${short}:${line + 1}`;
}

function summarise(path: string, top: number, onlyArea: string | null): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  // timeDeltas[i] is the gap before sample i; attribute each gap to the sample that ends it.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = Math.max(0, profile.timeDeltas[i] ?? 0);
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + dt);
    totalUs += dt;
  }
  const byFunction = new Map<string, { name: string; where: string; area: string; us: number }>();
  const byArea = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = functionName || '(anonymous)';
    const a = area(url, name);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
    const key = `${name}@${url}:${lineNumber}`;
    const entry = byFunction.get(key) ?? { name, where: location(url, lineNumber), area: a, us: 0 };
    entry.us += us;
    byFunction.set(key, entry);
  }
  const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1)}%`;
  const ms = (us: number) => (us / 1000).toFixed(1);
  const functions = [...byFunction.values()]
    .filter((f) => onlyArea === null || f.area === onlyArea)
    .sort((a, b) => b.us - a.us)
    .slice(0, top);
  const areas = [...byArea.entries()].sort((a, b) => b[1] - a[1]);
  return [
    `${path}: ${ms(totalUs)} ms sampled`,
    '',
    formatTable(
      ['area', 'self ms', 'self %'],
      areas.map(([a, us]) => [a, ms(us), pct(us)]),
    ),
    '',
    formatTable(
      ['function', 'self ms', 'self %', 'area', 'where'],
      functions.map((f) => [f.name, ms(f.us), pct(f.us), f.area, f.where]),
    ),
  ].join('\n');
}

const argv = process.argv.slice(2);
const areaFlag = argv.indexOf('--area');
const onlyArea = areaFlag >= 0 ? (argv.splice(areaFlag, 2)[1] ?? null) : null;
const [file, topArg, ...extra] = argv;
if (!file || extra.length > 0 || (topArg !== undefined && !(Number(topArg) > 0))) {
  console.error('usage: profile-summary.ts FILE.cpuprofile [TOP] [--area src|bench|db-ivm|gc|...]');
  process.exit(2);
}
console.log(summarise(file, Number(topArg ?? 10), onlyArea));
