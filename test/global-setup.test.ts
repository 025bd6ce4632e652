/**
 * The run's own temporary directory (test/global-setup.ts): test files and the processes they start
 * write under it, and it is removed when the run ends, so `npm test` leaves no weir-* directories.
 */
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

describe('the test run temporary directory', () => {
  it('is os.tmpdir() of the test files and of the processes they start', () => {
    expect(path.basename(os.tmpdir())).toMatch(/^weir-test-run-/);
    const child = execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { encoding: 'utf8' });
    expect(child).toBe(os.tmpdir());
  });
});
