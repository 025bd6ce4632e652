/**
 * Job code run where a task manager runs it: a real `node` process, with Weir from its sources
 * (`--conditions=weir-source --import tsx/esm`) and compiled (dist/, built by the global setup),
 * whose working directory has no copy of the job's files. The process materializes code the test
 * bundled (from a directory deleted before it starts), loads it as a job module and builds the
 * job; `weir-stream` in the code must be the process's own Weir (a FileSink the job makes is an
 * instanceof its FileSink) even with a decoy weir-stream in the working directory's
 * node_modules; another package resolves from the working directory first (a stand-in commander
 * there), then from Weir's installation (msgpackr); a stack trace names the helper's own file and
 * line. The process also hashes a local copy of a module as a task manager keeping its own does.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamEnvironment } from '../../../src/index.ts';
import { bundleJobModule } from '../../../src/cluster/job-code/bundle.ts';
import { jobCodePath } from '../../../src/cluster/job-code/code-cache.ts';
import type { JobCode } from '../../../src/cluster/job-code/job-code.ts';
import type { StreamEnvironmentOptions } from '../../../src/api/options.ts';

const exec = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../../..');
const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const CHILD = path.join(FIXTURES, 'task-manager-child.mjs');
const TSX_ESM = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;

interface ChildJob {
  readonly file: string;
  readonly name: string;
  readonly vertices: number;
  readonly sinkIsFileSink: boolean;
  readonly packages: { readonly commanderStandIn: boolean; readonly msgpackrPacks: boolean } | null;
  readonly stack: string;
}
interface ChildReport {
  readonly jobs: readonly ChildJob[];
  readonly localHash: string;
}

let root: string;
let jobMasterDir: string;
let tmCwd: string;
let requestFile: string;
let codes: JobCode[];
let localHash: string;

/** The job graph's vertex count, built here from the module itself. */
async function verticesOf(module: string): Promise<number> {
  const mod = (await import(module)) as { default: (env: StreamEnvironment) => void; options?: StreamEnvironmentOptions };
  const env = StreamEnvironment.create(mod.options);
  mod.default(env);
  return env.jobGraph().vertices.length;
}

/** A package in `dir`'s node_modules with one ES module as its entry. */
function fakePackage(dir: string, name: string, source: string): void {
  const pkg = path.join(dir, 'node_modules', name);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version: '0.0.0', type: 'module', exports: './index.js' }));
  writeFileSync(path.join(pkg, 'index.js'), source);
}

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'weir-job-code-tm-'));
  jobMasterDir = path.join(root, 'job-master');
  mkdirSync(jobMasterDir);
  for (const f of ['shipped-job.ts', 'shipped-helper.ts']) cpSync(path.join(FIXTURES, f), path.join(jobMasterDir, f));
  codes = [await bundleJobModule(path.join(jobMasterDir, 'shipped-job.ts')), await bundleJobModule(path.join(FIXTURES, 'imports-weir-index.ts'))];
  // The task manager's host has none of the job's files.
  rmSync(jobMasterDir, { recursive: true });
  const jobs = codes.map((c, i) => {
    const bytesFile = path.join(root, `code-${i}.bin`);
    writeFileSync(bytesFile, c.bytes);
    return { name: c.name, hash: c.hash, bytesFile };
  });
  requestFile = path.join(root, 'request.json');
  writeFileSync(requestFile, JSON.stringify({ jobs, localModule: path.join(FIXTURES, 'shipped-job.ts') }));
  localHash = (await bundleJobModule(path.join(FIXTURES, 'shipped-job.ts'))).hash;
  tmCwd = path.join(root, 'task-manager-cwd');
  fakePackage(tmCwd, 'weir-stream', "throw new Error('the decoy weir-stream in the working directory was imported');\n");
  fakePackage(tmCwd, 'commander', 'export const standIn = true;\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function runTaskManager(nodeArgs: readonly string[], weirBase: string, ext: string): Promise<{ report: ChildReport; cache: string }> {
  const cache = path.join(root, `cache-${ext}`);
  const { stdout } = await exec(process.execPath, [...nodeArgs, CHILD, weirBase, ext, cache, requestFile], { cwd: tmCwd });
  return { report: JSON.parse(stdout) as ChildReport, cache };
}

async function expectJobsRun(report: ChildReport, cache: string): Promise<void> {
  const [shipped, indexed] = report.jobs;
  expect(shipped!.file).toBe(jobCodePath(codes[0]!, cache));
  expect(shipped!.name).toBe('shipped');
  expect(shipped!.vertices).toBe(await verticesOf(path.join(FIXTURES, 'shipped-job.ts')));
  expect(shipped!.sinkIsFileSink).toBe(true);
  expect(shipped!.packages).toEqual({ commanderStandIn: true, msgpackrPacks: true });
  expect(shipped!.stack).toContain('exploded in the helper');
  expect(shipped!.stack).toContain(`${path.join(jobMasterDir, 'shipped-helper.ts')}:10:`);
  expect(indexed!.file).toBe(jobCodePath(codes[1]!, cache));
  expect(indexed!.vertices).toBe(await verticesOf(path.join(FIXTURES, 'imports-weir-index.ts')));
  expect(indexed!.sinkIsFileSink).toBe(true);
  expect(report.localHash).toBe(localHash);
}

describe('job code in a task manager process without the job files', () => {
  it('runs with Weir from its sources (--conditions=weir-source, tsx)', async () => {
    const { report, cache } = await runTaskManager(['--conditions=weir-source', '--import', TSX_ESM], path.join(REPO, 'src'), 'ts');
    await expectJobsRun(report, cache);
  });

  it('runs with Weir compiled (dist/)', async () => {
    const { report, cache } = await runTaskManager([], path.join(REPO, 'dist', 'src'), 'js');
    await expectJobsRun(report, cache);
  });
});
