#!/usr/bin/env node
/**
 * `npm run test:unit`: the quick lane, for iterating — every test file that needs no server, no
 * browser, no child process and no worker thread, found by reading the files (and the test helpers
 * they import) for what starts one. `npm test` stays the whole suite; this lane is a subset of it.
 * Extra arguments go to vitest (e.g. `npm run test:unit -- --reporter dot`); `--list` prints the lane.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What starts a process, a worker, a server connection or a browser in a test or a helper it imports. */
const NEEDS_MORE =
  /child_process|runCli|spawn\(|ioredis|from 'pg'|playwright|new Worker|WorkerTaskManagers|worker-task-managers|taskManagers\s*:|chromium|execFile|fork\(|connect\(|createServer|typedoc/;
const RELATIVE_IMPORT = /from '(\.[^']+)'/g;

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(p));
    else if (entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const memo = new Map();
/** Whether a test file, or a test helper it imports (transitively), needs more than this process. */
function needsMore(file, seen = new Set()) {
  if (memo.has(file)) return memo.get(file);
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let result = NEEDS_MORE.test(text);
  for (const m of text.matchAll(RELATIVE_IMPORT)) {
    if (result) break;
    const target = path.resolve(path.dirname(file), m[1]);
    if (target.startsWith(path.join(ROOT, 'test') + path.sep)) result = needsMore(target, seen);
  }
  memo.set(file, result);
  return result;
}

const lane = testFiles(path.join(ROOT, 'test'))
  .filter((f) => !needsMore(f))
  .map((f) => path.relative(ROOT, f))
  .sort();
const args = process.argv.slice(2);
if (args.includes('--list')) {
  process.stdout.write(`${lane.join('\n')}\n${lane.length} files\n`);
} else {
  const vitest = path.join(ROOT, 'node_modules/vitest/vitest.mjs');
  const r = spawnSync(process.execPath, [vitest, 'run', ...args, ...lane], { cwd: ROOT, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
