import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, lines, REPO, runCli } from './run-cli.ts';

/** A usage error: exit 2 and exactly one line on stderr, starting `weir: `. */
async function expectUsageError(args: string[]): Promise<string> {
  const r = await runCli(args);
  expect(r.code, r.stderr).toBe(2);
  const err = lines(r.stderr);
  expect(err, r.stderr).toHaveLength(1);
  expect(err[0]).toMatch(/^weir: /);
  return err[0]!;
}

describe('weir usage errors exit 2 with one line', () => {
  it('names an unknown flag', async () => {
    const line = await expectUsageError(['run', path.join(FIXTURES, 'tiny-job.ts'), '--bogus-flag']);
    expect(line).toContain('--bogus-flag');
  });

  it('names a missing job module by its path', async () => {
    const missing = path.join(FIXTURES, 'does-not-exist.ts');
    const line = await expectUsageError(['run', missing]);
    expect(line).toContain(missing);
  });

  it('rejects --parallelism 0 and names parallelism', async () => {
    const line = await expectUsageError(['run', path.join(FIXTURES, 'tiny-job.ts'), '--parallelism', '0']);
    expect(line).toContain('parallelism');
  });

  it('rejects a non-integer --checkpoint-interval', async () => {
    const line = await expectUsageError(['run', path.join(FIXTURES, 'tiny-job.ts'), '--checkpoint-interval', '1.5']);
    expect(line).toContain('--checkpoint-interval');
  });

  it('rejects a module without a default export function', async () => {
    const line = await expectUsageError(['run', path.join(FIXTURES, 'no-default.ts')]);
    expect(line).toContain('no default export');
  });

  it('refuses a script that runs its job at import, before the job runs, naming the file', async () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'weir-script-'));
    try {
      const script = path.join(REPO, 'examples/word-count.ts');
      for (const command of [
        ['run', script],
        ['sim', '--job', script, '--seed', '1'],
      ]) {
        const r = await runCli(command, { cwd });
        expect(r.code, r.stderr).toBe(2);
        const err = lines(r.stderr);
        expect(err, r.stderr).toHaveLength(1);
        expect(err[0]).toContain(`${script} runs a job when imported`);
        expect(err[0]).toContain('export default (env: StreamEnvironment)');
        expect(r.stdout).not.toContain('FINISHED');
      }
      // word-count.ts checkpoints into ./checkpoints: the job never started, so nothing was written.
      expect(readdirSync(cwd)).toEqual([]);
      const notAwaited = path.join(FIXTURES, 'script-not-awaited.ts');
      const line = await expectUsageError(['run', notAwaited]);
      expect(line).toContain(`${notAwaited} runs a job when imported`);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('refuses a storage location with a URL scheme it does not support, naming the flag and the scheme, creating nothing', async () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'weir-scheme-'));
    try {
      const tiny = path.join(FIXTURES, 'tiny-job.ts');
      const cases: Array<[string[], string]> = [
        [['run', tiny, '--checkpoint-dir', 'gs://bucket/x'], "--checkpoint-dir: unsupported URL scheme 'gs:'"],
        [['run', tiny, '--from', 'gs://bucket/x/chk-3'], "--from: unsupported URL scheme 'gs:'"],
        [['demo', '--dir', 'gs://bucket/demo'], "--dir: unsupported URL scheme 'gs:'"],
        [['demo', '--dir', 's3://bucket/demo'], '--dir s3://bucket/demo: the demo needs a local directory'],
        [['run', tiny, '--checkpoint-dir', 's3://Not_A_Bucket/x'], '--checkpoint-dir: invalid s3: location "s3://Not_A_Bucket/x": bucket name'],
        [['savepoint', 'some-job', '--dir', 'gs://bucket/sp'], "--dir: unsupported URL scheme 'gs:'"],
        [['stop', 'some-job', '--savepoint', '--dir', 'gs://bucket/sp'], "--dir: unsupported URL scheme 'gs:'"],
      ];
      for (const [args, want] of cases) {
        const r = await runCli(args, { cwd });
        expect(r.code, r.stderr).toBe(2);
        expect(lines(r.stderr), r.stderr).toEqual([expect.stringContaining(want)]);
      }
      // Before, `--checkpoint-dir gs://bucket/x` ran the job into a local directory named `gs:`.
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('reports a ConfigError from the module options, naming the option', async () => {
    const line = await expectUsageError(['run', path.join(FIXTURES, 'bad-options.ts')]);
    expect(line).toContain('checkpointing.intervalMs');
  });

  it('rejects an unknown command and a missing checkpoint directory', async () => {
    expect(await expectUsageError(['frobnicate'])).toContain('frobnicate');
    expect(await expectUsageError(['checkpoints', path.join(FIXTURES, 'no-such-dir')])).toContain('no-such-dir');
  });

  it('refuses a non-empty demo directory', async () => {
    expect(await expectUsageError(['demo', '--dir', FIXTURES])).toContain('not empty');
  });

  it('rejects --from pointing nowhere', async () => {
    const nowhere = path.join(FIXTURES, 'no-such-checkpoint');
    const line = await expectUsageError(['run', path.join(FIXTURES, 'tiny-job.ts'), '--from', nowhere]);
    expect(line).toContain(nowhere);
  });
});
