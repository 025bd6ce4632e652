/**
 * The task manager's cache of job code: bytes checked against their hash before anything is
 * written, the file written whole (no temporary file left, concurrent writers agree), reused when
 * present with the right bytes and rewritten when not.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleJobModule } from '../../../src/cluster/job-code/bundle.ts';
import { defaultJobCodeCacheDir, hashOfLocalModule, jobCodePath, materializeJobCode } from '../../../src/cluster/job-code/code-cache.ts';
import { checkSameJobCode, jobCodeHash, type ShippedJobCode } from '../../../src/cluster/job-code/job-code.ts';
import { ClusterError } from '../../../src/core/errors.ts';

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'shipped-job.ts');
const codeOf = (source: string, name = 'job.ts'): ShippedJobCode => {
  const bytes = new TextEncoder().encode(source);
  return { name, hash: jobCodeHash(bytes), bytes };
};

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'weir-job-code-cache-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
const freshDir = (): string => mkdtempSync(path.join(root, 'cache-'));

describe('materializeJobCode', () => {
  it('writes <cacheDir>/<hash>/<name without extension>.mjs with the bytes and leaves no temporary file', async () => {
    const cache = freshDir();
    const code = codeOf('export default () => 1;\n', 'my-job.ts');
    const file = await materializeJobCode(code, cache);
    expect(file).toBe(path.join(cache, code.hash, 'my-job.mjs'));
    expect(file).toBe(jobCodePath(code, cache));
    expect(readFileSync(file, 'utf8')).toBe('export default () => 1;\n');
    expect(readdirSync(path.dirname(file))).toEqual(['my-job.mjs']);
  });

  it('reuses a file already there with the right bytes, rewrites one that rotted', async () => {
    const cache = freshDir();
    const code = codeOf('export default () => 2;\n');
    const file = await materializeJobCode(code, cache);
    const before = statSync(file);
    expect(await materializeJobCode(code, cache)).toBe(file);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    writeFileSync(file, 'export default () => 666;\n');
    await materializeJobCode(code, cache);
    expect(readFileSync(file, 'utf8')).toBe('export default () => 2;\n');
  });

  it('lets concurrent writers of the same code agree, beside a temporary file a killed writer left', async () => {
    const cache = freshDir();
    const code = codeOf(`export default () => '${'x'.repeat(200_000)}';\n`);
    const file = jobCodePath(code, cache);
    const dir = path.dirname(file);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${file}.tmp-killed-writer`, 'export default "half');
    const files = await Promise.all(Array.from({ length: 6 }, () => materializeJobCode(code, cache)));
    expect(new Set(files)).toEqual(new Set([file]));
    expect(jobCodeHash(readFileSync(file))).toBe(code.hash);
    expect(readdirSync(dir).sort()).toEqual([path.basename(file), `${path.basename(file)}.tmp-killed-writer`]);
  });

  it('refuses bytes that do not have the hash with CLUSTER_REFUSED naming both hashes, and writes nothing', async () => {
    const cache = freshDir();
    const sent = codeOf('export default () => 3;\n');
    const tampered = { ...sent, bytes: new TextEncoder().encode('export default () => 4;\n') };
    const err = await materializeJobCode(tampered, cache, 'job master 10.0.0.1:6123').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterError);
    expect((err as ClusterError).code).toBe('CLUSTER_REFUSED');
    expect((err as ClusterError).peer).toBe('job master 10.0.0.1:6123');
    expect((err as Error).message).toContain(sent.hash);
    expect((err as Error).message).toContain(jobCodeHash(tampered.bytes));
    expect(readdirSync(cache)).toEqual([]);
  });

  it('refuses a name or hash that would not name one file in the cache', async () => {
    const cache = freshDir();
    const good = codeOf('export default 5;\n');
    for (const name of ['../evil.ts', 'a/b.ts', '..', '']) {
      await expect(materializeJobCode({ ...good, name }, cache)).rejects.toMatchObject({ code: 'CLUSTER_REFUSED' });
    }
    await expect(materializeJobCode({ ...good, hash: '../x' }, cache)).rejects.toMatchObject({ code: 'CLUSTER_REFUSED' });
    await expect(materializeJobCode({ ...good, hash: good.hash.toUpperCase() }, cache)).rejects.toMatchObject({ code: 'CLUSTER_REFUSED' });
    expect(readdirSync(cache)).toEqual([]);
  });
});

describe('hashOfLocalModule and the default cache directory', () => {
  it('hashes a local module as the job master bundles it', async () => {
    expect(await hashOfLocalModule(FIXTURE)).toBe((await bundleJobModule(FIXTURE)).hash);
  });

  it("refuses a task manager's copy whose functions differ (same graph) with CLUSTER_REFUSED naming both hashes", async () => {
    const dir = mkdtempSync(path.join(root, 'copy-'));
    for (const f of ['shipped-job.ts', 'shipped-helper.ts']) cpSync(path.join(path.dirname(FIXTURE), f), path.join(dir, f));
    const ours = await bundleJobModule(path.join(dir, 'shipped-job.ts'));
    expect(() => checkSameJobCode(ours, ours.hash, 'task manager 1')).not.toThrow();
    const helper = path.join(dir, 'shipped-helper.ts');
    writeFileSync(helper, readFileSync(helper, 'utf8').replace('return `n', 'return `m'));
    const theirs = await hashOfLocalModule(path.join(dir, 'shipped-job.ts'));
    let err: unknown;
    try {
      checkSameJobCode(ours, theirs, 'task manager 1');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClusterError);
    expect(err).toMatchObject({ code: 'CLUSTER_REFUSED', peer: 'task manager 1' });
    expect((err as Error).message).toContain(ours.hash);
    expect((err as Error).message).toContain(theirs);
  });

  it('is $XDG_CACHE_HOME/weir/job-code, else ~/.cache/weir/job-code (a relative XDG_CACHE_HOME is ignored)', () => {
    expect(defaultJobCodeCacheDir({ XDG_CACHE_HOME: '/var/cache/u' }, '/home/u')).toBe('/var/cache/u/weir/job-code');
    expect(defaultJobCodeCacheDir({}, '/home/u')).toBe('/home/u/.cache/weir/job-code');
    expect(defaultJobCodeCacheDir({ WEIR_HOME: '/srv/weir', XDG_CACHE_HOME: '/var/cache/u' }, '/home/u')).toBe('/srv/weir/job-code');
    expect(defaultJobCodeCacheDir({ XDG_CACHE_HOME: 'rel' }, '/home/u')).toBe('/home/u/.cache/weir/job-code');
    expect(defaultJobCodeCacheDir({}).startsWith(os.homedir())).toBe(true);
  });
});
