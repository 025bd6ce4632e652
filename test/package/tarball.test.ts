/**
 * The package as a user gets it: `npm pack` the clone (dist/ is built by the test setup), install the
 * tarball into a fresh project, and use it there the three ways a user would: plain Node ESM, a
 * strict TypeScript project checked by tsc, and `npx weir run job.ts`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../cli/run-cli.ts';

const exec = promisify(execFile);
const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
const ALLOWED_TOP = new Set(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bin', 'dist']);

interface PackResult {
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

const PLAIN_ESM = `import { CollectSink, StreamEnvironment } from 'weir-stream';
const env = StreamEnvironment.create({ parallelism: 2 });
const sink = new CollectSink();
env.fromElements(1, 2, 3, 4).map((x) => x * 10).uid('times-ten').sinkTo(sink);
const result = await env.execute('plain-esm');
console.log(\`\${result.status} \${sink.results().sort((a, b) => a - b).join(',')}\`);
`;

const TYPED = `import { CollectSink, CountEvictor, StreamEnvironment, ValueStateDescriptor, WeirError, type Evictor, type JobModule, type JobResult, type ValueState } from 'weir-stream';
import * as job from './job.js';
job satisfies JobModule;
// @ts-expect-error -- a job module's default export builds the job: a function of the environment
({ default: 42 }) satisfies JobModule;
const evictor: Evictor<string> = CountEvictor.of<string>(2);
const env = StreamEnvironment.create({ parallelism: 2, checkpointing: { intervalMs: 100 } });
const sink = new CollectSink<string>();
env
  .fromElements('a', 'b', 'a')
  .keyBy((word) => word)
  .process(() => {
    let seen: ValueState<number>;
    return {
      open(ctx) { seen = ctx.getState(new ValueStateDescriptor<number>('seen', 0)); },
      processElement(word, _ctx, out) { seen.update((seen.value() ?? 0) + 1); out.collect(\`\${word}=\${seen.value()}\`); },
    };
  })
  .uid('count')
  .sinkTo(sink);
const result: JobResult = await env.execute('typed');
const lines: string[] = sink.results();
console.log(result.status, lines.length, WeirError.name, evictor.evictBefore !== undefined);
// @ts-expect-error -- count is a number: this line fails the check if the types were 'any'
env.generate({ count: 'many' }, (i) => i);
// @ts-expect-error -- the simulator's hooks are not part of the public RunOptions
await env.execute('hooks', { onJobMaster: () => {} });
`;

const JOB = `import { ValueStateDescriptor, type StreamEnvironment, type ValueState } from 'weir-stream';
export const name = 'consumer-job';
export default (env: StreamEnvironment): void => {
  env
    .fromElements('x', 'y', 'x')
    .keyBy((s: string) => s)
    .process(() => {
      let n: ValueState<number>;
      return {
        open(ctx) { n = ctx.getState(new ValueStateDescriptor<number>('n', 0)); },
        processElement(s: string, _ctx, out) { n.update((n.value() ?? 0) + 1); out.collect(\`\${s}:\${n.value()}\`); },
      };
    })
    .uid('count')
    .print();
};
`;

describe('the packed package, installed into a fresh project', () => {
  let tmp: string;
  let project: string;
  let packed: PackResult;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'weir-tarball-'));
    const out = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: REPO });
    packed = (JSON.parse(out.stdout) as PackResult[])[0]!;
    project = path.join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
    // The strictest settings a consumer may use: the shipped .d.ts must hold under them too.
    const strict = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      skipLibCheck: false,
      types: ['node'],
    };
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: strict, include: ['*.ts'] }));
    writeFileSync(path.join(project, 'plain.mjs'), PLAIN_ESM);
    writeFileSync(path.join(project, 'typed.ts'), TYPED);
    writeFileSync(path.join(project, 'job.ts'), JOB);
    const deps = [path.join(tmp, packed.filename), `typescript@${pkg.devDependencies.typescript}`, `@types/node@${pkg.devDependencies['@types/node']}`];
    // --engine-strict: a dependency whose engines refuse this Node (20 here, as Weir declares) fails the install.
    await exec('npm', ['install', '--engine-strict', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...deps], { cwd: project });
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('holds only the compiled package: dist, bin, README, LICENSE, CHANGELOG, package.json', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths.filter((p) => !ALLOWED_TOP.has(p.split('/')[0]!))).toEqual([]);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'CHANGELOG.md',
        'bin/weir.mjs',
        'dist/src/index.js',
        'dist/src/index.d.ts',
        'dist/src/cli/main.js',
        'dist/src/web/server.js',
        'dist/dashboard/index.html',
      ]),
    );
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
  });

  it('imports and runs a job in plain Node ESM', async () => {
    const r = await exec(process.execPath, ['plain.mjs'], { cwd: project });
    expect(r.stdout).toBe('FINISHED 10,20,30,40\n');
  });

  it('type-checks a strict TypeScript project against its .d.ts (skipLibCheck off, exactOptionalPropertyTypes on), JobModule included', async () => {
    const r = await exec(process.execPath, [path.join(project, 'node_modules/typescript/bin/tsc'), '-p', '.'], { cwd: project }).catch(
      (e: { stdout: string; code: number }) => e,
    );
    expect(r.stdout).toBe('');
  }, 90_000);

  it('npx weir --version and npx weir run job.ts work from the project', async () => {
    const env = { ...process.env, WEIR_HOME: path.join(tmp, 'weir-home'), NO_COLOR: '1' };
    const version = await exec('npx', ['--no-install', 'weir', '--version'], { cwd: project, env });
    expect(version.stdout).toBe(`${pkg.version}\n`);
    const run = await exec('npx', ['--no-install', 'weir', 'run', 'job.ts', '--quiet'], { cwd: project, env });
    expect(run.stdout.split('\n').filter(Boolean).sort()).toEqual(['x:1', 'x:2', 'y:1']);
    expect(run.stderr).toMatch(/^FINISHED \| job consumer-job-/m);
  }, 60_000);
});
