#!/usr/bin/env node
/**
 * Builds dist/ (compiled ESM JavaScript and .d.ts) from src/ with the TypeScript compiler:
 * `node scripts/build.mjs` always rebuilds (what `npm run build` and `npm ci` run);
 * `--if-stale` rebuilds only when dist/ is missing or older than a source file (what the test
 * setup runs, so the spawned `weir` command never runs stale code).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
/** Written last by a successful build; its mtime is the build's. */
const STAMP = path.join(DIST, '.built');
const INPUTS = ['src', 'dashboard', 'examples/bank-transfers.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestMtimeMs(p) {
  const info = statSync(p);
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(p)) newest = Math.max(newest, newestMtimeMs(path.join(p, name)));
  return newest;
}

export function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((p) => newestMtimeMs(path.join(ROOT, p)) > built);
}

/** Cleans dist/ and compiles; throws with the compiler's output when it fails. */
export function build() {
  rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building dist/ failed (tsc -p tsconfig.build.json exited ${r.status}):\n${r.stdout}${r.stderr}`);
  buildDashboard();
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

/** The web dashboard (dashboard/, vanilla TypeScript) bundled by Vite into dist/dashboard, which the web server serves. */
function buildDashboard() {
  const vite = path.join(path.dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  const r = spawnSync(process.execPath, [vite, 'build', '--config', path.join(ROOT, 'dashboard', 'vite.config.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building the dashboard failed (vite build exited ${r.status}):\n${r.stdout}${r.stderr}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    if (!process.argv.includes('--if-stale') || isStale()) build();
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
