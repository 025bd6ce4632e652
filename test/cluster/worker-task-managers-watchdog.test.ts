/**
 * The cancellation watchdog with task managers on worker threads: on
 * attempt 0 a map throws, and the cancel that follows runs a sink teardown stuck in user code, so
 * neither worker answers. The watchdog terminates them, and the next attempt must run on new
 * workers: a terminated (here: still spinning) one never gets another deploy.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StreamEnvironment, type JobEvent } from '../../src/index.ts';
import { tempDir } from '../support/jobs.ts';
import build from './fixtures/tm-stuck-cancel-job.ts';

const MODULE = join(import.meta.dirname, 'fixtures', 'tm-stuck-cancel-job.ts');
const VARS = ['STUCK_RECORDS', 'STUCK_FAIL_AT', 'STUCK_ON_CANCEL', 'STUCK_BUILDS'];
const root = tempDir('weir-tm-watchdog-');

afterEach(() => {
  for (const v of VARS) delete process.env[v];
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('cancellation watchdog on worker threads', () => {
  it('terminates workers stuck in user code on cancel; the next attempt runs on new ones and finishes', async () => {
    const builds = join(root, 'builds');
    // Workers get a copy of this environment when they start.
    Object.assign(process.env, { STUCK_RECORDS: '2000', STUCK_FAIL_AT: '500', STUCK_ON_CANCEL: '1', STUCK_BUILDS: builds });
    const env = StreamEnvironment.create({
      parallelism: 2,
      taskManagers: 2,
      checkpointStorage: join(root, 'chk'),
      checkpointing: { intervalMs: 100 },
      // One restart only: a deploy sent to a stuck worker would be answered by nothing but the
      // heartbeat timeout, and that second failure would fail the job.
      restartStrategy: { type: 'fixed-delay', attempts: 1, delayMs: 10 },
      heartbeat: { intervalMs: 200, timeoutMs: 20_000 },
      cancellationTimeoutMs: 500,
    });
    build(env);
    env.setJobModule(MODULE);
    const events: JobEvent[] = [];
    const result = await env.execute('tm-stuck-cancel', { onEvent: (e) => events.push(e) });
    const logs = events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logs.some((m) => /did not stop (its|their) subtasks within cancellationTimeoutMs \(500 ms\): terminated/.test(m))).toBe(true);
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const restarting = events.find((e) => e.type === 'restarting');
    const cause = restarting?.type === 'restarting' ? restarting.cause : '';
    expect(cause, cause).toMatch(/injected failure at record 500/);
    // Two workers for attempt 0, two new ones for attempt 1.
    const threads = readFileSync(builds, 'utf8').trim().split('\n');
    expect(threads).toHaveLength(4);
    expect(new Set(threads).size).toBe(4);
  }, 120_000);
});
