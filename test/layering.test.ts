/**
 * Imports point down the data path (docs/design.md, "Layout"; docs/architecture.md, "Layers"): a
 * table says which top-level folders of src/ each folder may import, the scan reads the import
 * statements of every src file, and every import the table does not allow fails the test unless it
 * is one of the listed exceptions. Each exception is follow-up work; an exception that no longer
 * occurs fails too, so the list only shrinks.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../src');

/** `src/index.ts` and `src/internal.ts`, the package's entries, count as one layer. */
const ENTRY = 'index';
/** Any import that leaves src/ (`../examples/...`). */
const OUTSIDE = '(outside src)';

/** Below the data path: what storage, state, checkpoint and runtime build on. */
const RUNTIME_AND_BELOW = ['runtime', 'checkpoint', 'state', 'storage', 'core'];
/** What a front end (api, the entries, sim, cli) may build on. */
const ENGINE = ['cluster', 'connectors', 'graph', ...RUNTIME_AND_BELOW];

/** Which top-level folders each top-level folder may import besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  storage: ['core'],
  state: ['storage', 'core'],
  checkpoint: ['state', 'storage', 'core'],
  runtime: ['checkpoint', 'state', 'storage', 'core'],
  graph: RUNTIME_AND_BELOW,
  connectors: RUNTIME_AND_BELOW,
  cluster: ['graph', ...RUNTIME_AND_BELOW],
  api: ENGINE,
  [ENTRY]: ['api', ...ENGINE],
  advisor: ['checkpoint', 'storage', 'core'],
  web: ['advisor', 'api', 'cluster', 'graph', ...RUNTIME_AND_BELOW],
  sim: [ENTRY, 'api', ...ENGINE],
  cli: [ENTRY, 'advisor', 'api', 'sim', 'web', ...ENGINE],
};

/** Today's imports against the table, `file -> imported file` (both relative to src/), each with why it is there. */
const EXCEPTIONS: Record<string, string> = {
  'cli/demo-command.ts -> ../examples/bank-transfers.ts': '`weir demo` runs the example job (tsconfig.build compiles it into dist/)',
  'cli/verify-ledger.ts -> ../examples/bank-transfers.ts': 'the ledger check reads the example job types (type only)',
};

/** `import ... from '...'`, `export ... from '...'`, `import('...')` and side-effect `import '...'`. */
const IMPORT_RE = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

type Import = { file: string; target: string };

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const posix = (p: string): string => p.split(sep).join('/');

/** Every relative import of every file under `dir`, as paths relative to src/ (`storage/paths.ts`). */
function importsUnder(dir: string): Import[] {
  return files(dir).flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(IMPORT_RE)]
      .map((m) => m[1]!)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => ({ file: posix(relative(SRC, f)), target: posix(relative(SRC, resolve(dirname(f), spec))) })),
  );
}

/** The layer of a path relative to src/. */
function layerOf(path: string): string {
  if (path.startsWith('../')) return OUTSIDE;
  const slash = path.indexOf('/');
  return slash < 0 ? ENTRY : path.slice(0, slash);
}

const key = (i: Import): string => `${i.file} -> ${i.target}`;

/** Imports the table does not allow, as `file -> target` lines. */
function violations(imports: readonly Import[]): string[] {
  return imports
    .filter((i) => {
      const from = layerOf(i.file);
      const to = layerOf(i.target);
      return from !== to && !(MAY_IMPORT[from] ?? []).includes(to);
    })
    .map(key);
}

describe('layering of src/', () => {
  const imports = importsUnder(SRC);

  it('every top-level folder and entry of src/ has a row in the table, and the table names only real layers', () => {
    const layers = [...new Set(readdirSync(SRC).map((n) => (statSync(join(SRC, n)).isDirectory() ? n : ENTRY)))].sort();
    expect(Object.keys(MAY_IMPORT).sort()).toEqual(layers);
    for (const allowed of Object.values(MAY_IMPORT)) for (const l of allowed) expect(layers).toContain(l);
  });

  it('no file imports a folder its layer may not import, except the listed exceptions', () => {
    const found = violations(imports);
    const unexpected = found.filter((v) => !(v in EXCEPTIONS));
    expect(unexpected, `imports against the layering table (docs/architecture.md, "Layers"):\n${unexpected.join('\n')}\n`).toEqual([]);
  });

  it('every listed exception still occurs (remove it when it is fixed)', () => {
    const found = new Set(violations(imports));
    expect(Object.keys(EXCEPTIONS).filter((e) => !found.has(e))).toEqual([]);
  });

  it('core imports nothing above it, and nothing but cli imports sim', () => {
    const fromCore = imports.filter((i) => layerOf(i.file) === 'core' && layerOf(i.target) !== 'core');
    expect(fromCore.map(key)).toEqual([]);
    const ofSim = imports.filter((i) => layerOf(i.target) === 'sim' && !['sim', 'cli'].includes(layerOf(i.file)));
    expect(ofSim.map(key)).toEqual([]);
  });

  it('the scan sees imports of every shape: multi-line, type-only, re-export, inline import() and outside src', () => {
    const targets = new Set(imports.map(key));
    expect(targets).toContain('runtime/functions.ts -> state/descriptors.ts');
    expect(targets).toContain('checkpoint/metadata/serializer.ts -> storage/file-format.ts');
    expect(targets).toContain('state/handles/registry.ts -> state/handles/kind.ts');
    expect(targets).toContain('runtime/windows/window-operator.ts -> core/ids.ts');
    expect(targets).toContain('cli/demo-command.ts -> ../examples/bank-transfers.ts');
    expect([...targets].some((t) => t.startsWith('index.ts -> api/'))).toBe(true);
    expect(imports.length).toBeGreaterThan(1000);
  });

  it('the check itself flags an import up the data path, into sim, out of core and out of src', () => {
    expect(
      violations([
        { file: 'runtime/stream-task.ts', target: 'api/environment.ts' },
        { file: 'storage/paths.ts', target: 'checkpoint/metadata/serializer.ts' },
        { file: 'web/server.ts', target: 'sim/sim-run.ts' },
        { file: 'core/ids.ts', target: 'state/key-groups.ts' },
        { file: 'state/backend.ts', target: '../package.json' },
        { file: 'cluster/job-master/job-master.ts', target: 'runtime/stream-task.ts' },
      ]),
    ).toEqual([
      'runtime/stream-task.ts -> api/environment.ts',
      'storage/paths.ts -> checkpoint/metadata/serializer.ts',
      'web/server.ts -> sim/sim-run.ts',
      'core/ids.ts -> state/key-groups.ts',
      'state/backend.ts -> ../package.json',
    ]);
  });
});
