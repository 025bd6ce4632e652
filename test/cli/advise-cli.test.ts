/**
 * `weir advise` on a real job directory: the tiny job retains one checkpoint, too few for advice,
 * and the command says how many it measured and needs, in text and JSON; the job directory's
 * figures file (every checkpoint of the run) is what advise reads there; a directory without
 * checkpoints is a usage error naming it.
 */
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIGURES_FILE } from '../../src/advisor/figures-file.ts';
import { MIN_CHECKPOINTS } from '../../src/advisor/thresholds.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, runCli } from './run-cli.ts';

describe('weir advise <dir>', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weir-advise-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'gives no advice for a job directory with one retained checkpoint, and names a directory without checkpoints',
    async () => {
      const run = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--checkpoint-dir', dir, '--quiet']);
      expect(run.code, run.stderr).toBe(0);
      const text = await runCli(['advise', dir]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toBe(`No advice yet: 1 checkpoints measured, need ${MIN_CHECKPOINTS} (${dir})\n`);
      const json = await runCli(['advise', dir, '--json']);
      expect(JSON.parse(json.stdout)).toEqual({ kind: 'too-few', measured: 1, needed: MIN_CHECKPOINTS, source: dir });

      // the job directory keeps every checkpoint's figures in its figures file, which advise prefers
      const [jobId] = (await readdir(dir)).filter((n) => n.startsWith('tiny-'));
      const jobDir = path.join(dir, jobId!);
      const file = JSON.parse(await readFile(path.join(jobDir, FIGURES_FILE), 'utf8')) as { version: number; checkpoints: unknown[] };
      expect(file.version).toBe(2);
      expect(file.checkpoints.length).toBeGreaterThanOrEqual(1);
      const fromFile = JSON.parse((await runCli(['advise', jobDir, '--json'])).stdout) as { kind: string; measured?: number; situation?: { measured: number } };
      expect(fromFile.measured ?? fromFile.situation?.measured).toBe(file.checkpoints.length);

      const empty = path.join(dir, 'empty');
      await mkdir(empty);
      const bad = await runCli(['advise', empty]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`no completed checkpoints under ${empty}`);
      const missing = await runCli(['advise', path.join(dir, 'missing')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`no such directory: ${path.join(dir, 'missing')}`);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
