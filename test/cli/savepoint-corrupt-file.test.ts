/**
 * `--from` a savepoint with a truncated or missing state file is refused up
 * front — exit 2, naming the file and the savepoint, nothing started — as a truncated `_metadata`
 * is, instead of starting the job and failing it with "trying an older retained checkpoint".
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { truncateLargestStateFile } from './fixtures/kill-job.ts';
import { checkpointsIn, KILL_JOB, killGroup, startKillJob, waitUntil } from './kill-harness.ts';
import { CLI_TEST_TIMEOUT_MS, lines, runCli } from './run-cli.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'weir-sp-corrupt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A savepoint of the kill job with real state files (padded keyed state), taken while it runs. */
async function takeSavepoint(): Promise<string> {
  const run = await startKillJob(path.join(root, 'chk'), null, { KILL_PAD_BYTES: '4000', KILL_RATE: '500' });
  try {
    await waitUntil(run.cli, 'a completed checkpoint', () => checkpointsIn(run.jobDir).completed.length > 0);
    const jobId = path.basename(run.jobDir);
    const taken = await runCli(['savepoint', jobId, '--dir', path.join(root, 'sp')]);
    expect(taken.code, taken.stderr).toBe(0);
    return lines(taken.stdout).at(-1)!;
  } finally {
    await killGroup(run.cli);
  }
}

function stateFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n !== '_metadata')
    .map((n) => path.join(dir, n))
    .filter((f) => statSync(f).size > 0);
}

describe('--from a savepoint with a bad state file', () => {
  it(
    'a truncated or a missing state file: exit 2 naming the file and the savepoint, before the job starts',
    async () => {
      const savepoint = await takeSavepoint();
      expect(stateFiles(savepoint).length).toBeGreaterThan(0);
      const id = /savepoint-(\d+)-/.exec(path.basename(savepoint))![1];
      const missing = path.join(root, 'sp', `savepoint-${id}-missing`);
      cpSync(savepoint, missing, { recursive: true });

      const truncated = truncateLargestStateFile(savepoint);
      const run = await runCli(['run', KILL_JOB, '--checkpoint-dir', path.join(root, 'chk2'), '--from', savepoint]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(
        new RegExp(
          `^weir: ${truncated}: truncated: expected \\d+ bytes, found \\d+ \\(a state file of savepoint ${id} at ${savepoint}, which cannot be restored\\)$`,
          'm',
        ),
      );
      expect(run.stderr).not.toContain('control:');
      expect(run.stderr).not.toContain('older retained checkpoint');

      const gone = stateFiles(missing)[0]!;
      rmSync(gone);
      const run2 = await runCli(['run', KILL_JOB, '--checkpoint-dir', path.join(root, 'chk2'), '--from', missing]);
      expect(run2.code, run2.stderr).toBe(2);
      expect(run2.stderr).toContain(`weir: ${gone}: state file is missing (a state file of savepoint ${id} at ${missing}, which cannot be restored)`);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
