/**
 * Weir's own package as the job-code bundler and resolver see it: its root (the directory of the
 * package.json named `weir-stream` above this file: the clone, or node_modules/weir-stream when
 * installed) and the public specifier of every file its `exports` map names, under every condition
 * (`weir-source` sources, compiled `default`, `types`).
 */
import { readFileSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEIR_PACKAGE_NAME = 'weir-stream';

/** The root of the running Weir and what its `exports` map makes public. */
export interface WeirPackage {
  /** Absolute and real (symbolic links resolved, as the bundler reports files). */
  readonly root: string;
  /** Absolute file -> public specifier (`<root>/src/index.ts` -> `weir-stream`). */
  readonly publicFiles: ReadonlyMap<string, string>;
  /** Every public specifier but `weir-stream/package.json`, for messages. */
  readonly specifiers: readonly string[];
}

let cached: WeirPackage | null = null;

/** The package that contains this module (read once per process). */
export function weirPackage(): WeirPackage {
  return (cached ??= readWeirPackage(realpathSync(path.dirname(fileURLToPath(import.meta.url)))));
}

function readWeirPackage(from: string): WeirPackage {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = readManifest(path.join(dir, 'package.json'));
    if (manifest?.name === WEIR_PACKAGE_NAME) return { root: dir, ...publicFilesOf(dir, manifest.exports) };
    if (path.dirname(dir) === dir) throw new Error(`the package.json of ${WEIR_PACKAGE_NAME} is not found above ${from}`);
  }
}

function readManifest(file: string): { name?: unknown; exports?: unknown } | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; exports?: unknown };
  } catch {
    return null;
  }
}

/** The files each subpath export names, under any condition (nested condition objects included). */
function publicFilesOf(root: string, exports: unknown): Pick<WeirPackage, 'publicFiles' | 'specifiers'> {
  const publicFiles = new Map<string, string>();
  const specifiers: string[] = [];
  const sugar =
    typeof exports === 'string' ||
    Array.isArray(exports) ||
    (typeof exports === 'object' && exports !== null && !Object.keys(exports).some((k) => k.startsWith('.')));
  const map = sugar ? { '.': exports } : exports;
  const entries = typeof map === 'object' && map !== null ? Object.entries(map) : [];
  for (const [subpath, target] of entries) {
    if (subpath === './package.json') continue;
    const specifier = subpath === '.' ? WEIR_PACKAGE_NAME : `${WEIR_PACKAGE_NAME}/${subpath.replace(/^\.\//, '')}`;
    specifiers.push(specifier);
    for (const file of targetsOf(target)) publicFiles.set(path.resolve(root, file), specifier);
  }
  return { publicFiles, specifiers };
}

function targetsOf(target: unknown): string[] {
  if (typeof target === 'string') return [target];
  if (typeof target !== 'object' || target === null) return [];
  return Object.values(target).flatMap(targetsOf);
}
