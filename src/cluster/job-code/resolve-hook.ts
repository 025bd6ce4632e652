/**
 * How the task manager resolves the imports of job code in its cache, which has no node_modules
 * above it: a Node module resolve hook (`module.register`) that acts only for importers under a
 * registered cache directory. `weir-stream` and `weir-stream/*` resolve to the running Weir as a
 * self-reference from its own package.json, under the conditions the process runs with, so they
 * are the very modules the task manager uses (from sources under `--conditions=weir-source`,
 * src/index.ts; compiled, dist/src/index.js): a FileSink the job makes is an `instanceof` the task
 * manager's FileSink. Any other package resolves as if imported from the working directory's
 * package.json, then from Weir's (packages installed beside Weir, such as pg).
 *
 * Hooks run on Node's loader thread, so the hook is a small plain-JavaScript module given as a
 * data: URL: nothing to compile or copy into dist/, and it imports only node builtins. Node 20
 * does not hand hooks to worker threads: register in the thread that imports the job code.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { register } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { WEIR_PACKAGE_NAME, weirPackage } from './weir-package.ts';

/** What the hook is initialized with (all file URLs). */
interface HookData {
  /** The cache directories, each ending in `/`: their files are the importers the hook acts for. */
  readonly dirs: readonly string[];
  readonly weirName: string;
  /** Weir's package.json: the importer `weir-stream` is resolved from. */
  readonly weirManifest: string;
  /** The importers other packages are tried from, in order. */
  readonly parents: readonly string[];
}

const HOOK_SOURCE = `
import { fileURLToPath } from 'node:url';
let data;
export function initialize(d) { data = d; }
const PACKAGE = /^(?!\\.\\.?(?:\\/|$)|\\/|[a-zA-Z]:[\\\\/]|#|[a-zA-Z][a-zA-Z\\d+.-]*:)/;
export async function resolve(specifier, context, next) {
  const from = context.parentURL;
  if (from === undefined || !PACKAGE.test(specifier) || !data.dirs.some((d) => from.startsWith(d))) return next(specifier, context);
  if (specifier === data.weirName || specifier.startsWith(data.weirName + '/')) return next(specifier, { ...context, parentURL: data.weirManifest });
  for (const parentURL of data.parents) {
    try {
      return await next(specifier, { ...context, parentURL });
    } catch (err) {
      if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    }
  }
  const where = data.parents.map((p) => fileURLToPath(new URL('.', p))).join(' and ');
  const err = new Error("Cannot find package '" + specifier + "' imported from job code " + fileURLToPath(from) + ': not found from ' + where +
    ': a package a job imports must be installed on every task manager host');
  err.code = 'ERR_MODULE_NOT_FOUND';
  throw err;
}
`;

const HOOK_URL = `data:text/javascript,${encodeURIComponent(HOOK_SOURCE)}`;

/** Cache directories this thread registered a hook for. */
const registered = new Set<string>();

/**
 * Makes job code under `cacheDir` importable (creating the directory); once per directory per
 * thread, later calls are no-ops. Other packages are tried from `cwd` (default: the working
 * directory now), then from Weir's package. Also turns on source maps for stack traces, so an
 * error in job code names the user's file and line.
 */
export function registerJobCodeResolution(cacheDir: string, cwd = process.cwd()): void {
  const abs = path.resolve(cacheDir);
  if (registered.has(abs)) return;
  mkdirSync(abs, { recursive: true, mode: 0o700 });
  const weir = weirPackage();
  const weirManifest = path.join(weir.root, 'package.json');
  const data: HookData = {
    // Node names an imported file by its real path: the directory as given and as it really is.
    dirs: unique([abs, realpathSync(abs)]).map((d) => `${pathToFileURL(d).href}/`),
    weirName: WEIR_PACKAGE_NAME,
    weirManifest: pathToFileURL(weirManifest).href,
    parents: unique([path.join(path.resolve(cwd), 'package.json'), weirManifest]).map((p) => pathToFileURL(p).href),
  };
  process.setSourceMapsEnabled(true);
  register(HOOK_URL, { data });
  registered.add(abs);
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
