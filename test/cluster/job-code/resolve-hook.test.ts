/**
 * What registerJobCodeResolution hands Node (the hook itself runs in task-manager-process.test.ts):
 * one registration per cache directory, the directory both as given and as it really is, and
 * packages tried from the working directory before Weir's own package.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const register = vi.hoisted(() => vi.fn());
vi.mock('node:module', async (original) => ({ ...(await original<typeof import('node:module')>()), register }));

const { registerJobCodeResolution } = await import('../../../src/cluster/job-code/resolve-hook.ts');
const REPO = path.resolve(import.meta.dirname, '../../..');

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'weir-job-code-hook-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('registerJobCodeResolution', () => {
  it('registers a data: URL hook once per cache directory, with the directory as given and as it really is', () => {
    const real = path.join(root, 'real-cache');
    const linked = path.join(root, 'linked-cache');
    registerJobCodeResolution(real, '/srv/tm');
    symlinkSync(real, linked);
    registerJobCodeResolution(linked, '/srv/tm');
    registerJobCodeResolution(`${linked}/`, '/srv/tm');
    registerJobCodeResolution(real, '/elsewhere');
    expect(register).toHaveBeenCalledTimes(2);
    const [url, options] = register.mock.calls[1]! as [string, { data: Record<string, unknown> }];
    expect(url.startsWith('data:text/javascript,')).toBe(true);
    expect(options.data).toEqual({
      dirs: [`${pathToFileURL(linked).href}/`, `${pathToFileURL(real).href}/`],
      weirName: 'weir-stream',
      weirManifest: pathToFileURL(path.join(REPO, 'package.json')).href,
      parents: [pathToFileURL('/srv/tm/package.json').href, pathToFileURL(path.join(REPO, 'package.json')).href],
    });
  });

  it('gives a hook that sends weir-stream to Weir, tries other packages from the working directory then Weir, and leaves the rest alone', async () => {
    const [url] = register.mock.calls[0]! as [string];
    const hook = (await import(url)) as Hook;
    const data = {
      dirs: ['file:///cache/'],
      weirName: 'weir-stream',
      weirManifest: 'file:///weir/package.json',
      parents: ['file:///cwd/package.json', 'file:///weir/package.json'],
    };
    hook.initialize(data);
    const calls: Array<[string, string | undefined]> = [];
    const next = async (specifier: string, context: Context) => {
      calls.push([specifier, context.parentURL]);
      if (specifier === 'nowhere' || (specifier === 'pg' && context.parentURL === 'file:///cwd/package.json'))
        throw Object.assign(new Error('not found'), { code: 'ERR_MODULE_NOT_FOUND' });
      return { url: `file:///resolved/${specifier}`, conditions: context.conditions };
    };
    const fromCache = { parentURL: 'file:///cache/abc/job.mjs', conditions: ['node', 'import', 'weir-source'] };
    expect(await hook.resolve('weir-stream/postgres', fromCache, next)).toEqual({
      url: 'file:///resolved/weir-stream/postgres',
      conditions: fromCache.conditions,
    });
    await hook.resolve('commander', fromCache, next);
    await hook.resolve('pg', fromCache, next);
    await hook.resolve('node:fs', fromCache, next);
    await hook.resolve('./other.mjs', fromCache, next);
    await hook.resolve('weir-stream', { parentURL: 'file:///app/main.js', conditions: [] }, next);
    expect(calls).toEqual([
      ['weir-stream/postgres', 'file:///weir/package.json'],
      ['commander', 'file:///cwd/package.json'],
      ['pg', 'file:///cwd/package.json'],
      ['pg', 'file:///weir/package.json'],
      ['node:fs', 'file:///cache/abc/job.mjs'],
      ['./other.mjs', 'file:///cache/abc/job.mjs'],
      ['weir-stream', 'file:///app/main.js'],
    ]);
    await expect(hook.resolve('nowhere', fromCache, next)).rejects.toMatchObject({
      code: 'ERR_MODULE_NOT_FOUND',
      message:
        "Cannot find package 'nowhere' imported from job code /cache/abc/job.mjs: not found from /cwd/ and /weir/: a package a job imports must be installed on every task manager host",
    });
  });
});

type Context = { parentURL?: string; conditions: string[] };
interface Hook {
  initialize(data: unknown): void;
  resolve(specifier: string, context: Context, next: (specifier: string, context: Context) => Promise<unknown>): Promise<unknown>;
}
