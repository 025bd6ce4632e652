import { afterEach, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { seriesSum, until, webClient } from './web-client.ts';

describe('REST and metrics around a failure and with unaligned checkpoints', () => {
  let job: RunningWebJob | null = null;
  let server: WebServer | null = null;
  afterEach(async () => {
    await job?.client.cancel();
    await server?.close();
    job = null;
    server = null;
  });

  it('a crash and recovery show as an exception, a restart, a restored checkpoint and in /metrics', async () => {
    job = await startWebJob({ parallelism: 2, throwAtRecord: 30 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'recovery-token', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    const restored = (await job.client.triggerCheckpoint()).checkpointId; // before any record: nothing to fail yet
    job.gate.allowUpTo(200);
    const details = await until(
      () => web.get(`/jobs/${jid}`),
      (r) => r.body.restarts === 1 && r.body.state === 'RUNNING',
    );
    expect(details.body['restored-from']).toBe(restored);
    expect(details.body.exceptions).toHaveLength(1);
    expect(details.body.exceptions[0]).toMatchObject({ attempt: 0, restarted: true });
    expect(details.body.exceptions[0].exception).toContain('match failed at record 30');
    expect((await web.get(`/jobs/${jid}/exceptions`)).body.exceptions).toEqual(details.body.exceptions);
    const cps = await web.get(`/jobs/${jid}/checkpoints`);
    expect(cps.body.counts.restored).toBe(1);
    expect(cps.body.latest.restored.id).toBe(restored);
    // the restore time of the recovery (deploy and restore until running), which the advisor reads
    const restoreMs = cps.body.latest.restored.restore_duration;
    expect(Number.isInteger(restoreMs) && restoreMs >= 0).toBe(true);
    for (let i = 0; i < 5; i++) await job.client.triggerCheckpoint();
    const advice = await web.get(`/jobs/${jid}/advice`);
    expect(advice.body.kind).toBe('advice');
    expect(advice.body.situation).toMatchObject({ lastRestoreMs: restoreMs, restarts: 1 });
    expect(advice.body.situation.maxSyncMs).toBeGreaterThanOrEqual(0);
    expect(advice.body.situation.alignmentShare).toBeGreaterThanOrEqual(0);
    const metrics = (await web.get('/metrics')).body as string;
    expect(metrics).toMatch(/^weir_restarts_total\{[^}]*\} 1$/m);
  });

  it('records in and out count every attempt (as /metrics does), with the running attempt beside them', async () => {
    job = await startWebJob({ parallelism: 2, throwAtRecord: 30 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'totals-token', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    await job.client.triggerCheckpoint(); // before any record: the restart replays everything
    job.gate.allowUpTo(200);
    // 4 source subtasks x 200 records in the second attempt, all through the match vertex.
    const d = (
      await until(
        () => web.get(`/jobs/${jid}`),
        (r) => r.body.restarts === 1 && r.body['records-in-attempt'] === 800 && r.body.vertices[2].metrics['read-records-attempt'] === 800,
      )
    ).body;
    const firstAttempt = d['records-in'] - d['records-in-attempt'];
    expect(firstAttempt).toBeGreaterThanOrEqual(30); // what the sources emitted before the crash
    expect(d['records-out'] - d['records-out-attempt']).toBeGreaterThan(0);
    const sources = d.vertices.slice(0, 2);
    expect(sources.reduce((a: number, v: any) => a + v.metrics['read-records'], 0)).toBe(d['records-in']);
    expect(sources.reduce((a: number, v: any) => a + v.metrics['read-records-attempt'], 0)).toBe(800);
    expect(d.vertices[2].metrics['read-records']).toBeGreaterThan(800);
    const metrics = (await web.get('/metrics')).body as string;
    const sum = (name: string, vertex: string) => seriesSum(metrics, name, vertex);
    for (const v of d.vertices) {
      expect(sum('weir_records_in_total', v.id)).toBe(v.metrics['read-records']);
      expect(sum('weir_records_out_total', v.id)).toBe(v.metrics['write-records']);
    }
  });

  it('an ended job keeps its end: end-time set, duration and uptime frozen (CANCELED; FINISHED in rest.test)', async () => {
    job = await startWebJob({ parallelism: 1 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'ended-token', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    expect((await web.get(`/jobs/${jid}`)).body['end-time']).toBe(-1);
    await job.client.cancel();
    const first = (await web.get(`/jobs/${jid}`)).body;
    const uptime = () => web.get('/metrics').then((r) => /^weir_job_uptime_seconds\{[^}]*\} (\S+)$/m.exec(r.body as string)?.[1]);
    const up = await uptime();
    await new Promise((r) => setTimeout(r, 60));
    const later = (await web.get(`/jobs/${jid}`)).body;
    expect(first.state).toBe('CANCELED');
    expect(first['end-time']).toBeGreaterThanOrEqual(first['start-time']);
    expect(first.duration).toBe(first['end-time'] - first['start-time']);
    expect(later.now).toBeGreaterThan(first['end-time']);
    expect([later['end-time'], later.duration]).toEqual([first['end-time'], first.duration]);
    expect(await uptime()).toBe(up);
    expect(Number(up)).toBe(first.duration / 1000);
  });

  it('an unaligned checkpoint is typed so, and its barriers are drawn overtaking', async () => {
    job = await startWebJob({ parallelism: 2, unaligned: true });
    server = await startWebServer({ client: job.client, master: job.master, token: 'unaligned-token', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    job.gate.allowUpTo(100);
    await job.gate.reached(2);
    const cid = (await job.client.triggerCheckpoint()).checkpointId;
    expect((await web.get(`/jobs/${jid}/checkpoints/details/${cid}`)).body.checkpoint_type).toBe('UNALIGNED_CHECKPOINT');
    expect((await web.get(`/jobs/${jid}/checkpoints/config`)).body).toMatchObject({ unaligned_checkpoints: true, aligned_checkpoint_timeout: 0 });
    const subs = (await web.get(`/jobs/${jid}/checkpoints/details/${cid}/subtasks/2`)).body.subtasks;
    for (const s of subs) expect(s.unaligned_checkpoint).toBe(true);
    const flow = (await web.get(`/jobs/${jid}/checkpoints/details/${cid}/flow`)).body;
    expect(flow.alignment).toBe('unaligned');
    const barriers = flow.events.filter((e: { type: string }) => e.type === 'barrier');
    expect(barriers).toHaveLength(8);
    for (const b of barriers) expect(b).toMatchObject({ overtook: true, ahead: 0 });
    expect(flow.events.filter((e: { type: string }) => e.type === 'blocked')).toEqual([]);
  });
});
