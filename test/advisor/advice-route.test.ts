/**
 * `GET /jobs/:id/advice` against a running job: no advice with one checkpoint (saying it needs
 * MIN_CHECKPOINTS), then, once enough checkpoints completed on the small quiet job, advice with no
 * change.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_CHECKPOINTS } from '../../src/advisor/thresholds.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { tempDir } from '../support/jobs.ts';
import { type RunningWebJob, startWebJob } from '../support/web-job.ts';
import { webClient } from '../web/web-client.ts';

const TOKEN = 'advice-token';

describe('GET /jobs/:id/advice', () => {
  let job: RunningWebJob;
  let server: WebServer;
  let web: ReturnType<typeof webClient>;
  let jid: string;
  const dir = tempDir('weir-advice-');

  beforeAll(async () => {
    job = await startWebJob({ parallelism: 2, checkpointStorage: dir });
    server = await startWebServer({ client: job.client, master: job.master, token: TOKEN, sampleIntervalMs: 50, onStopped: () => {} });
    web = webClient(server.address, TOKEN);
    jid = job.client.jobId;
    job.gate.allowUpTo(100);
    await job.gate.reached(2);
  });
  afterAll(async () => {
    await job.client.cancel();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says how many checkpoints it needs, then advises no change for the small quiet job', async () => {
    await job.client.triggerCheckpoint();
    const few = await web.get(`/jobs/${jid}/advice`);
    expect(few.status).toBe(200);
    expect(few.body).toEqual({ kind: 'too-few', measured: 1, needed: MIN_CHECKPOINTS, source: `job ${jid}` });
    for (let i = 1; i < MIN_CHECKPOINTS; i++) await job.client.triggerCheckpoint();
    const r = await web.get(`/jobs/${jid}/advice`);
    expect(r.body.kind).toBe('advice');
    expect(r.body.situation).toMatchObject({ measured: MIN_CHECKPOINTS, completed: MIN_CHECKPOINTS, timedOut: 0 });
    expect(r.body.situation.latestStateBytes).toBeGreaterThan(0);
    expect(r.body.recommendations).toEqual([]);
  });

  it('names an unknown job', async () => {
    const r = await web.get('/jobs/nope/advice');
    expect(r.status).toBe(404);
  });
});
