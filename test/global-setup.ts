/**
 * Before the suite: builds dist/ once when it is missing or older than the sources (tests spawn the
 * real `weir` command, bin/weir.mjs, which runs the compiled code, never the sources), and gives
 * the run a temporary directory of its own. Every test file, and every process a test starts,
 * inherits it as TMPDIR, so whatever they leave in os.tmpdir() (weir-* directories by the hundred:
 * a killed child never cleans up) goes when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build, isStale } from '../scripts/build.mjs';

export default function setup(): () => void {
  if (isStale()) build();
  const outer = process.env.TMPDIR;
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'weir-test-run-'));
  process.env.TMPDIR = runDir;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    rmSync(runDir, { recursive: true, force: true });
  };
}
