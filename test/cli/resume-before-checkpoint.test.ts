/**
 * `--from <job dir>` of a first run killed before its first checkpoint completed is
 * refused (exit 2) naming the directory and saying no checkpoint completed yet; a resumed run killed
 * before its own first checkpoint resumes from the checkpoint it started from (its lineage).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointsIn, killGroup } from './kill-harness.ts';
import { waitForMatch } from './running-job.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, runCli, startCli } from './run-cli.ts';

const SLOW_JOB = path.join(FIXTURES, 'slow-job.ts');
const root = mkdtempSync(path.join(os.tmpdir(), 'weir-resume-early-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Starts `weir run slow-job.ts` in its own process group; resolves with the run and its job dir once it runs. */
async function startSlow(args: readonly string[]) {
  const cli = startCli(['run', SLOW_JOB, '--checkpoint-dir', root, ...args], { detached: true });
  try {
    const m = await waitForMatch(cli, /^control: \S+ \(job ([A-Za-z0-9._-]+)\)$/m, 60_000, "the 'control:' line");
    return { cli, jobDir: path.join(root, m[1]!) };
  } catch (err) {
    await killGroup(cli);
    throw err;
  }
}

describe('--from a job dir before its first checkpoint', () => {
  it(
    'a first run killed before its first checkpoint: refused with exit 2, naming the dir; a resumed run killed so: resumes from its origin',
    async () => {
      const first = await startSlow(['--checkpoint-interval', '600000']);
      await killGroup(first.cli);
      expect(checkpointsIn(first.jobDir).completed).toEqual([]);
      const refused = await runCli(['run', SLOW_JOB, '--checkpoint-dir', root, '--from', first.jobDir]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`weir: ${first.jobDir}: `);
      expect(refused.stderr).toContain('no checkpoint completed yet');
      expect(refused.stderr).toContain('start the job without --from');

      // A run with a checkpoint, then a resumed run killed before its own first one.
      const origin = await startSlow(['--checkpoint-interval', '100']);
      const until = Date.now() + 60_000;
      while (checkpointsIn(origin.jobDir).completed.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      await killGroup(origin.cli);
      const originChk = checkpointsIn(origin.jobDir).completed.at(-1)!;
      expect(originChk).toBeDefined();
      const resumed = await startSlow(['--checkpoint-interval', '600000', '--from', origin.jobDir]);
      // The record is written when the restore happens, which can follow the control line (the
      // task manager's worker starts first): wait for it, then kill.
      const recorded = path.join(resumed.jobDir, '_restored_from');
      const untilRecorded = Date.now() + 60_000;
      while (!existsSync(recorded) && Date.now() < untilRecorded) await new Promise((r) => setTimeout(r, 20));
      await killGroup(resumed.cli);
      expect(checkpointsIn(resumed.jobDir).completed).toEqual([]);
      expect(existsSync(path.join(resumed.jobDir, '_restored_from'))).toBe(true);

      const again = await startSlow(['--checkpoint-interval', '600000', '--from', resumed.jobDir]);
      await waitForMatch(again.cli, /restored from checkpoint \d+/, 60_000, "the 'restored from' line");
      await killGroup(again.cli);
      const stderr = again.cli.output().stderr;
      expect(stderr).toContain(
        `restoring from checkpoint ${originChk} at ${path.join(origin.jobDir, `chk-${originChk}`)}: job directory ${resumed.jobDir} was restored from it (it completed no checkpoint of its own)`,
      );
      expect(stderr).toContain(`restored from checkpoint ${originChk}`);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
