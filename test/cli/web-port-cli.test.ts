/**
 * `weir run --web-port` and WEIR_WEB_PORT: the dashboard is served on the port asked for; a port
 * that is taken or is not a port stops the run before the job starts, with exit 2 and a message
 * naming the port and the option.
 */
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, FIXTURES, runCli } from './run-cli.ts';
import { startJob, waitForMatch, within } from './running-job.ts';

const SLOW_JOB = `${FIXTURES}/slow-job.ts`;

/** Listens on an ephemeral port of 127.0.0.1 (so the port is taken); `port` is that port. */
async function occupy(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A port free a moment ago (bound, then released). */
async function freePort(): Promise<number> {
  const taken = await occupy();
  await taken.close();
  return taken.port;
}

describe('weir run --web-port', () => {
  let taken: { port: number; close(): Promise<void> };
  beforeAll(async () => {
    taken = await occupy();
  });
  afterAll(async () => {
    await taken.close();
  });

  it('serves the dashboard and REST API on the port given (the flag wins over WEIR_WEB_PORT)', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const port = await freePort();
    const job = await startJob([SLOW_JOB, '--quiet', '--web-port', String(port)], { env: { WEIR_WEB_PORT: String(taken.port) } });
    try {
      const m = await waitForMatch(job.cli, /^dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ /m, 30_000, "the 'dashboard:' line");
      expect(m[1]).toBe(`http://127.0.0.1:${port}`);
      const jobs = (await (await fetch(`http://127.0.0.1:${port}/jobs`)).json()) as { jobs: Array<{ id: string }> };
      expect(jobs.jobs.map((j) => j.id)).toEqual([job.jobId]);
    } finally {
      job.cli.child.kill('SIGINT');
      await within(30_000, job.cli.done, () => `weir run did not end after SIGINT; stderr:\n${job.cli.output().stderr}`);
    }
  });

  it('a port that is taken: exit 2 naming the port and the option, before the job starts', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const r = await runCli(['run', SLOW_JOB, '--quiet', '--web-port', String(taken.port)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`weir: --web-port ${taken.port}: port ${taken.port} on 127.0.0.1 is already in use`);
    expect(r.stderr).toContain('leave --web-port out for an ephemeral one');
    expect(r.stderr).not.toContain('running job');
    const env = await runCli(['run', SLOW_JOB, '--quiet'], { env: { WEIR_WEB_PORT: String(taken.port) } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(`weir: WEIR_WEB_PORT=${taken.port}: port ${taken.port} on 127.0.0.1 is already in use`);
  });

  it('a value that is not a port: exit 2 naming the option and the value', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const flag = await runCli(['run', SLOW_JOB, '--web-port', '70000']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("weir: --web-port: must be an integer from 1 to 65535, got '70000'");
    const env = await runCli(['run', SLOW_JOB], { env: { WEIR_WEB_PORT: 'http' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("weir: WEIR_WEB_PORT: must be an integer from 1 to 65535, got 'http'");
  });

  it('WEIR_WEB_PORT without the flag: served there', { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const port = await freePort();
    const job = await startJob([SLOW_JOB, '--quiet'], { env: { WEIR_WEB_PORT: String(port) } });
    try {
      const m = await waitForMatch(job.cli, /^dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ /m, 30_000, "the 'dashboard:' line");
      expect(m[1]).toBe(`http://127.0.0.1:${port}`);
    } finally {
      job.cli.child.kill('SIGINT');
      await within(30_000, job.cli.done, () => `weir run did not end after SIGINT; stderr:\n${job.cli.output().stderr}`);
    }
  });
});
