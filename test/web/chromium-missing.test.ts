/**
 * Without Chromium the dashboard's browser tests are skipped with one line naming the fix, so
 * `npm test` stays green on a machine without a browser; with CI=true they fail loudly. Runs the
 * real vitest on the browser test file with WEIR_CHROMIUM pointing at a path that does not exist.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../cli/run-cli.ts';

const MISSING = path.join(REPO, 'test/web/no-such-chromium');

function runBrowserSuite(ci: boolean): { code: number | null; output: string } {
  const env: NodeJS.ProcessEnv = {};
  // The outer vitest's own variables would make the inner one think it is a worker.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'CI') env[k] = v;
  const r = spawnSync(process.execPath, [path.join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', 'test/web/dashboard.browser.test.ts'], {
    cwd: REPO,
    env: { ...env, NO_COLOR: '1', WEIR_CHROMIUM: MISSING, ...(ci ? { CI: 'true' } : {}) },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('browser tests without Chromium', () => {
  it('are skipped with one line naming the fix', () => {
    const r = runBrowserSuite(false);
    expect(r.code, r.output).toBe(0);
    const lines = r.output.split('\n').filter((l) => l.includes('no Chromium at'));
    expect(lines, r.output).toEqual([
      `dashboard browser tests skipped: no Chromium at ${MISSING}; install it (apt-get install chromium) or set WEIR_CHROMIUM to a Chromium executable`,
    ]);
    expect(r.output).toMatch(/Tests\s+4 skipped/);
  });

  it('fail loudly when CI=true requires them', () => {
    const r = runBrowserSuite(true);
    expect(r.code, r.output).toBe(1);
    expect(r.output).toContain(`dashboard browser tests FAILED (CI=true requires them): no Chromium at ${MISSING}`);
  });
});
