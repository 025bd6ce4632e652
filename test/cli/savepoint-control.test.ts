import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, lines, REGISTRY, runCli, type CliResult } from './run-cli.ts';
import { startJob, untilRunning, waitForMatch, within } from './running-job.ts';

/** A usage error: exit 2, one line on stderr starting `weir: `. */
function expectUsage(r: CliResult): string {
  expect(r.code, r.stderr).toBe(2);
  const err = lines(r.stderr);
  expect(err, r.stderr).toHaveLength(1);
  expect(err[0]).toMatch(/^weir: /);
  return err[0]!;
}

/** One raw request to a control endpoint, with full control over the headers. */
function request(
  address: string,
  method: string,
  route: string,
  body: string | null,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(route, address), { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (s: string) => (text += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

describe('weir cancel, weir savepoint dispose and the control endpoint', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weir-cli-control-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('registers the job, answers on loopback, and weir cancel ends the run (exit 130), unregistering it', async () => {
    const job = await startJob([path.join(FIXTURES, 'slow-job.ts'), '--quiet']);
    const entryFile = path.join(REGISTRY, `${job.jobId}.json`);
    try {
      await untilRunning(job);
      const entry = JSON.parse(readFileSync(entryFile, 'utf8')) as Record<string, unknown>;
      expect(entry).toMatchObject({ jobId: job.jobId, address: job.address, pid: job.cli.child.pid, module: path.join(FIXTURES, 'slow-job.ts') });
      expect(new Date(entry.startedAt as string).toISOString()).toBe(entry.startedAt);

      // The entry is the job owner's only: 0600 in a 0700 directory; its token opens the endpoint.
      expect(statSync(entryFile).mode & 0o777).toBe(0o600);
      expect(statSync(REGISTRY).mode & 0o777).toBe(0o700);
      expect(entry.token).toMatch(/^[0-9a-f]{64}$/);
      const auth = { authorization: `Bearer ${entry.token as string}` };
      const json = { ...auth, 'content-type': 'application/json' };
      expect((await request(job.address, 'GET', '/status', null)).status).toBe(401);
      expect((await request(job.address, 'POST', '/cancel', '{}', { 'content-type': 'application/json' })).status).toBe(401);
      expect((await request(job.address, 'POST', '/cancel', '{}', { ...json, authorization: `Bearer ${'0'.repeat(64)}` })).status).toBe(401);
      const status = await request(job.address, 'GET', '/status', null, auth);
      expect(status.status).toBe(200);
      expect(status.json).toMatchObject({ jobId: job.jobId, status: 'RUNNING', attempt: 0 });
      expect((await request(job.address, 'POST', '/savepoint', '{"dir":"relative/dir"}', json)).status).toBe(400);
      expect((await request(job.address, 'POST', '/savepoint', '{"dir":"/tmp/x"}', { ...auth, 'content-type': 'text/plain' })).status).toBe(415);
      expect((await request(job.address, 'POST', '/savepoint', '{', json)).json.error).toBe('request body is not JSON');
      expect((await request(job.address, 'GET', '/nothing', null, auth)).status).toBe(404);
      expect((await request(job.address, 'GET', '/stop', null, auth)).status).toBe(405);
      const port = new URL(job.address).port;
      expect((await request(job.address, 'GET', '/status', null, { ...auth, host: `evil.example:${port}` })).status).toBe(403);

      const cancelled = await runCli(['cancel', job.jobId]);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stderr).toContain(`cancelled job ${job.jobId}`);
      const run = await within(30_000, job.cli.done, () => `weir run did not end after weir cancel; stderr:\n${job.cli.output().stderr}`);
      expect(run.code, run.stderr).toBe(130);
      expect(lines(run.stderr).at(-1)).toMatch(/^CANCELED \| job slow-/);
      expect(existsSync(entryFile)).toBe(false);
    } finally {
      job.cli.child.kill('SIGKILL');
    }
  });

  it('cancel --savepoint leaves a savepoint; dispose refuses checkpoints and other directories, and deletes the savepoint', async () => {
    const chk = path.join(dir, 'chk');
    // Held at 1,000 records a source subtask: the job is still running when the cancel arrives.
    const job = await startJob([path.join(FIXTURES, 'counts-job.ts'), '--checkpoint-dir', chk], { env: { COUNTS_HOLD: '1000' } });
    let savepoint: string;
    try {
      await waitForMatch(job.cli, /\| checkpoint \d+:/, 30_000, 'a completed checkpoint');
      const cancelled = await runCli(['cancel', job.jobId, '--savepoint', '--dir', path.join(dir, 'sp')]);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      savepoint = lines(cancelled.stdout).at(-1)!;
      expect(existsSync(path.join(savepoint, '_metadata'))).toBe(true);
      const run = await within(30_000, job.cli.done, () => `weir run did not end after weir cancel --savepoint; stderr:\n${job.cli.output().stderr}`);
      expect(run.code, run.stderr).toBe(130);
    } finally {
      job.cli.child.kill('SIGKILL');
    }

    // A retained checkpoint: tiny-job finishes and keeps its last one.
    const tiny = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--checkpoint-dir', path.join(dir, 'tiny'), '--quiet']);
    expect(tiny.code, tiny.stderr).toBe(0);
    const jobDir = path.join(dir, 'tiny', readdirSync(path.join(dir, 'tiny'))[0]!);
    const checkpoint = path.join(jobDir, readdirSync(jobDir).find((n) => n.startsWith('chk-'))!);
    const copiedCheckpoint = path.join(dir, 'looks-like-a-savepoint');
    cpSync(checkpoint, copiedCheckpoint, { recursive: true });
    const random = path.join(dir, 'random');
    mkdirSync(random);
    writeFileSync(path.join(random, 'notes.txt'), 'keep me\n');
    const missing = path.join(dir, 'no-such-savepoint');

    const refusals = await Promise.all([checkpoint, copiedCheckpoint, random, missing, jobDir].map((p) => runCli(['savepoint', 'dispose', p])));
    const [asChk, asCopied, asRandom, asMissing, asJobDir] = refusals.map(expectUsage);
    expect(asChk).toContain(checkpoint);
    expect(asChk).toMatch(/is checkpoint \d+ of a job/);
    expect(asCopied).toContain(copiedCheckpoint);
    expect(asCopied).toContain('not a savepoint');
    expect(asRandom).toContain(`${random} has no _metadata`);
    expect(asMissing).toContain(`${missing} does not exist`);
    expect(asJobDir).toContain(jobDir);
    for (const p of [checkpoint, copiedCheckpoint, random, jobDir]) expect(existsSync(p), p).toBe(true);
    expect(existsSync(path.join(random, 'notes.txt'))).toBe(true);

    // A savepoint belongs to its owner: --claim (take ownership of --from) refuses it.
    const claimed = await runCli(['run', path.join(FIXTURES, 'counts-job.ts'), '--from', savepoint, '--claim']);
    expect(expectUsage(claimed)).toContain('claim');

    const disposed = await runCli(['savepoint', 'dispose', savepoint]);
    expect(disposed.code, disposed.stderr).toBe(0);
    expect(disposed.stdout).toContain(`disposed savepoint ${savepoint}`);
    expect(existsSync(savepoint)).toBe(false);
  });

  it('an unknown job id, a job whose weir run is gone, and a bad <job> are usage errors naming it', async () => {
    // A pid that certainly exited: a child we ran to its end.
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid!;
    const stale = `stale-${process.pid}-test`;
    mkdirSync(REGISTRY, { recursive: true, mode: 0o700 });
    const staleFile = path.join(REGISTRY, `${stale}.json`);
    const entry = { address: 'http://127.0.0.1:9', token: 'f'.repeat(64), module: '/x.ts', startedAt: new Date(0).toISOString() };
    writeFileSync(staleFile, JSON.stringify({ ...entry, jobId: stale, pid: deadPid }), { mode: 0o600 });

    const [unknown, gone, notAnId, remote, noSavepointFlag, noJob, dirWithoutSavepoint, claimWithoutFrom] = await Promise.all([
      runCli(['savepoint', 'no-such-job-4711']),
      runCli(['stop', stale, '--savepoint']),
      runCli(['cancel', '../etc']),
      runCli(['savepoint', 'http://192.0.2.1:8080']),
      runCli(['stop', 'some-job']),
      runCli(['savepoint']),
      runCli(['cancel', 'some-job', '--dir', '/tmp/x']),
      runCli(['run', path.join(FIXTURES, 'tiny-job.ts'), '--claim']),
    ]);
    expect(expectUsage(unknown)).toContain("no running job 'no-such-job-4711'");
    expect(expectUsage(gone)).toContain(`job '${stale}' is not running: its weir run process ${deadPid} is gone`);
    expect(existsSync(staleFile)).toBe(false);
    expect(expectUsage(notAnId)).toContain('../etc');
    expect(expectUsage(remote)).toContain('loopback only');
    expect(expectUsage(noSavepointFlag)).toContain('--savepoint');
    expect(expectUsage(noJob)).toContain("missing required argument 'job'");
    expect(expectUsage(dirWithoutSavepoint)).toContain('--dir');
    expect(expectUsage(claimWithoutFrom)).toContain('--claim');

    // An address no registered job serves: weir has no token for it.
    expect(expectUsage(await runCli(['savepoint', 'http://127.0.0.1:9']))).toContain('no job registered');
    // Registered (by a live process: this one), but nothing listens there: the job is gone, which is not a usage error.
    writeFileSync(path.join(REGISTRY, 'gone-listener.json'), JSON.stringify({ ...entry, jobId: 'gone-listener', pid: process.pid }), { mode: 0o600 });
    const refused = await runCli(['savepoint', 'http://127.0.0.1:9']);
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([expect.stringMatching(/^weir: error: cannot reach the job at http:\/\/127\.0\.0\.1:9: connection refused/)]);
  });
});
