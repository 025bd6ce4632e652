/**
 * The `weir` command with S3 checkpoint storage (a real s3rver on loopback, reached the AWS way
 * through the environment): a run checkpointing to `--checkpoint-dir s3://...` takes a savepoint
 * with `--dir s3://...`, is SIGKILLed mid-run, and resumes with `--from s3://<job prefix>` with its
 * file output exactly once; `weir checkpoints`, `weir savepoint inspect` and `dispose` work on S3
 * URLs; a missing bucket is one error naming it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedLines } from '../../src/index.ts';
import { type S3TestServer, startS3rver } from '../support/s3-server.ts';
import { expectedLines, KEYS } from './fixtures/counts-job.ts';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, lines, runCli } from './run-cli.ts';
import { startJob, waitForMatch, within } from './running-job.ts';

const COUNTS = path.join(FIXTURES, 'counts-job.ts');
/** Shippable to task manager processes (it imports only 'weir-stream'). */
const KILL_JOB = path.join(FIXTURES, 'kill-job.ts');

describe('weir with S3 checkpoint storage', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let s3: S3TestServer;
  let dir: string;
  beforeAll(async () => {
    s3 = await startS3rver(['weir-cli']);
    dir = await mkdtemp(path.join(os.tmpdir(), 'weir-cli-s3-'));
  });
  afterAll(async () => {
    await s3.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('savepoint to S3, SIGKILL mid-run, resume from the S3 job prefix: output exactly once; list, inspect and dispose in S3', async () => {
    const out = path.join(dir, 'out');
    const env = { ...s3.env, COUNTS_OUTPUT: out };
    const job = await startJob([COUNTS, '--checkpoint-dir', 's3://weir-cli/chk'], { env: { ...env, COUNTS_HOLD: '1500' }, detached: true });
    let savepoint: string;
    try {
      await waitForMatch(job.cli, /\| checkpoint \d+:/, 60_000, 'a completed checkpoint');
      const taken = await runCli(['savepoint', job.jobId, '--dir', 's3://weir-cli/savepoints'], { env });
      expect(taken.code, taken.stderr).toBe(0);
      savepoint = lines(taken.stdout).at(-1)!;
      expect(savepoint).toMatch(/^s3:\/\/weir-cli\/savepoints\/savepoint-\d+-[0-9a-f]+$/);
      // A checkpoint completed after the savepoint (ids are shared): the job prefix must hold one when
      // the run is killed. Waiting for "two checkpoints" matched the two before the savepoint, so on a
      // fast run the kill came before any checkpoint after it, with none left in the prefix (the
      // savepoint is elsewhere): the resume below then found nothing (flaky since 2026-12-04).
      const savepointId = Number(/savepoint-(\d+)-/.exec(savepoint)![1]);
      const after = [1, 2, 3, 4].map((n) => savepointId + n).join('|');
      await waitForMatch(job.cli, new RegExp(`\\| checkpoint (${after}):`), 60_000, `a checkpoint completed after savepoint ${savepointId}`);
    } finally {
      process.kill(-job.cli.child.pid!, 'SIGKILL');
    }
    const killed = await within(30_000, job.cli.done, () => 'weir run did not die');
    expect(killed.signal).toBe('SIGKILL');
    const before = readCommittedLines(out);
    expect(before.length).toBeLessThan(8_000);

    const listed = await runCli(['checkpoints', 's3://weir-cli/chk', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const listings = JSON.parse(listed.stdout) as Array<{ jobId: string; status: string; location: string }>;
    expect(listings.some((l) => l.jobId === job.jobId && l.status === 'complete' && l.location.startsWith(`s3://weir-cli/chk/${job.jobId}/chk-`))).toBe(true);

    const inspected = await runCli(['savepoint', 'inspect', savepoint, '--json'], { env });
    expect(inspected.code, inspected.stderr).toBe(0);
    const report = JSON.parse(inspected.stdout) as { kind: string; jobId: string; operators: Array<{ uid: string; states: Array<{ keys?: number }> }> };
    expect(report.kind).toBe('savepoint');
    expect(report.jobId).toBe(job.jobId);
    expect(report.operators.find((o) => o.uid === 'count')!.states[0]!.keys).toBe(KEYS);

    const resumed = await runCli(['run', COUNTS, '--checkpoint-dir', 's3://weir-cli/chk', '--from', `s3://weir-cli/chk/${job.jobId}`, '--quiet'], {
      env: { ...env, COUNTS_RATE: '20000' },
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/restored from checkpoint \d+/);
    expect(resumed.stdout).toContain('counts: all 8000 lines committed exactly once');
    expect(readCommittedLines(out).sort()).toEqual(expectedLines());

    const disposed = await runCli(['savepoint', 'dispose', savepoint], { env });
    expect(disposed.code, disposed.stderr).toBe(0);
    const after = await runCli(['checkpoints', 's3://weir-cli/savepoints', '--json'], { env });
    expect(after.stderr).toContain('s3://weir-cli/savepoints: no such directory');
    // Credentials never reach the output.
    for (const r of [listed, inspected, resumed, disposed, after]) expect(`${r.stdout}${r.stderr}`).not.toContain(s3.env.AWS_SECRET_ACCESS_KEY);
  });

  it('task manager processes over TCP write their state to S3: the job ends with every line committed once', async () => {
    const out = path.join(dir, 'tm-out');
    const records = 6_000;
    const r = await runCli(['run', KILL_JOB, '--task-manager-processes', '2', '--checkpoint-dir', 's3://weir-cli/tm'], {
      env: { ...s3.env, KILL_OUTPUT: out, KILL_RECORDS: String(records), KILL_RATE: '6000', KILL_PAD_BYTES: '200' },
    });
    expect(r.code, r.stderr).toBe(0);
    // The summary, not a status line: a status line may come before the first checkpoint on a busy machine.
    expect(r.stderr).toMatch(/FINISHED .* checkpoints?, last checkpoint \d+: [^|]*\| retained at s3:\/\/weir-cli\/tm\/kill-/);
    const committed = readCommittedLines(out);
    expect(committed).toHaveLength(records);
    expect(new Set(committed).size).toBe(records);
  });

  it('a missing bucket is one error naming the URL, before the job starts', async () => {
    const r = await runCli(['run', COUNTS, '--checkpoint-dir', 's3://no-such-bucket/chk'], { env: { ...s3.env, COUNTS_OUTPUT: path.join(dir, 'never') } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/s3:\/\/no-such-bucket\/chk\/counts-[^:]+: bucket does not exist/);
    expect(r.stderr.match(/bucket does not exist/g)?.length).toBe(1);
  });
});
