/**
 * The planted defects 1 and 2 (scripts/plant-bugs/defects/) reproduced with real processes and SIGKILL (these tests failed on main
 * before the fix): resuming twice from the same checkpoint must not overwrite committed FileSink
 * output, and falling back past a corrupt newest checkpoint must not commit output twice.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkKillOutput } from './kill-oracle.ts';
import { checkpointsIn, KILL_JOB, killWhen, runKillTrial, startKillJob } from './kill-harness.ts';
import { KEYS, outputDirOf, truncateLargestStateFile } from './fixtures/kill-job.ts';
import { runCli } from './run-cli.ts';

const PAD = { KILL_PAD_BYTES: '4000' };

describe('exactly-once output across SIGKILL of weir run', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'weir-kill-defect-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('defect 1: resuming twice from the same checkpoint keeps the committed part files', { timeout: 120_000 }, async () => {
    // Killed right after checkpoint 1 completed; resumed from its job dir and killed before a new
    // checkpoint (after it wrote uncommitted output); resumed from the same job dir again to the end.
    const trial = await runKillTrial({
      root,
      steps: [
        { moment: 'after-complete', nth: 1 },
        { moment: 'resumed-no-checkpoint', nth: 1 },
      ],
      env: PAD,
    });
    expect(trial.kills.map((k) => k.moment)).toEqual(['after-complete', 'resumed-no-checkpoint']);
    expect(trial.kills[1]!.from).not.toBeNull();
    expect(trial.kills[1]!.completed).toEqual([]);
    expect(trial.final.code, trial.final.stderr).toBe(0);
    expect(trial.check.problems).toEqual([]);
  });

  it('defect 2 (--from a job dir): a truncated newest checkpoint does not make committed output repeat', { timeout: 120_000 }, async () => {
    const env = { ...PAD, KILL_RETAINED: '2' };
    const first = await startKillJob(root, null, { ...env, KILL_RATE: '2000' });
    const committedNewest = () => {
      const done = checkpointsIn(first.jobDir).completed;
      const newest = done.at(-1);
      return done.length >= 2 && readdirSync(outputDirOf(root)).some((n) => n.startsWith('part-') && n.endsWith(`-${newest}`));
    };
    expect(await killWhen(first.cli, 'second completed and committed checkpoint', committedNewest)).toBe(true);
    // Bit rot at rest: half of the newest checkpoint's largest state file is gone.
    const newest = checkpointsIn(first.jobDir).completed.at(-1)!;
    expect(readdirSync(outputDirOf(root)).some((n) => n.startsWith('part-') && n.endsWith(`-${newest}`))).toBe(true);
    truncateLargestStateFile(path.join(first.jobDir, `chk-${newest}`));

    const resumed = await runCli(['run', KILL_JOB, '--checkpoint-dir', root, '--from', first.jobDir, '--quiet'], { env: { ...env, KILL_RATE: '200000' } });
    expect(resumed.code, resumed.stderr).toBe(0);
    // The older retained checkpoint was restored and the sink took back what the newer one had committed.
    expect(resumed.stderr).toContain(`committed output after checkpoint ${newest - 1}, which the job restores: moved`);
    expect(readdirSync(path.join(outputDirOf(root), '.rolled-back', `after-checkpoint-${newest - 1}`)).some((n) => n.endsWith(`-${newest}`))).toBe(true);
    expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
  });

  it('defect 2 (in-process fallback): a subtask failing after the newest checkpoint rotted does not repeat committed output', {
    timeout: 120_000,
  }, async () => {
    const env = { ...PAD, KILL_RETAINED: '2', KILL_CORRUPT_AT: '2', KILL_RECORDS: '8000', KILL_RATE: '2000' };
    const run = await runCli(['run', KILL_JOB, '--checkpoint-dir', root, '--quiet'], { env });
    // The planted failure happened: the job truncated a state file of a committed checkpoint and failed a subtask.
    expect(existsSync(path.join(root, 'corrupted')), run.stderr).toBe(true);
    expect(readFileSync(path.join(root, 'corrupted'), 'utf8')).toMatch(/^\d+ \S+/);
    expect(run.stderr).toMatch(/planted failure/);
    expect(run.code, run.stderr).toBe(0);
    const corrupted = Number(readFileSync(path.join(root, 'corrupted'), 'utf8').split(' ')[0]);
    expect(run.stderr).toContain(`committed output after checkpoint ${corrupted - 1}, which the job restores: moved`);
    expect(checkKillOutput(outputDirOf(root), 8_000, KEYS).problems).toEqual([]);
  });
});
