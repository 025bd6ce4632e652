import { existsSync } from 'node:fs';
import * as http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { tempDir } from '../support/jobs.ts';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { until, webClient } from './web-client.ts';

const TOKEN = 'test-token-123';

describe('REST API against a running job (contract)', () => {
  let job: RunningWebJob;
  let server: WebServer;
  let web: ReturnType<typeof webClient>;
  let jid: string;
  let cid: number;
  let stopped: string | null = null;

  beforeAll(async () => {
    job = await startWebJob({ parallelism: 2, checkpointStorage: tempDir('weir-rest-') });
    server = await startWebServer({ client: job.client, master: job.master, token: TOKEN, sampleIntervalMs: 50, onStopped: (l) => (stopped = l) });
    web = webClient(server.address, TOKEN);
    jid = job.client.jobId;
    job.gate.allowUpTo(100);
    await job.gate.reached(2);
    cid = (await job.client.triggerCheckpoint()).checkpointId;
  });
  afterAll(async () => {
    await job.client.cancel();
    await server.close();
  });

  it('GET /jobs lists the job with its status', async () => {
    const r = await web.get('/jobs');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ jobs: [{ id: jid, status: 'RUNNING' }] });
  });

  it('GET /jobs/:id has the graph, vertices with parallelism and status, and records in/out per vertex', async () => {
    const r = await until(
      () => web.get(`/jobs/${jid}`),
      (x) => x.body.vertices?.[2]?.metrics['read-records'] === 400,
    );
    expect(r.status).toBe(200);
    expect(r.body.jid).toBe(jid);
    expect(r.body.state).toBe('RUNNING');
    expect(r.body.vertices.map((v: any) => [v.id, v.name, v.parallelism, v.status])).toEqual([
      ['0', 'orders', 2, 'RUNNING'],
      ['1', 'payments', 2, 'RUNNING'],
      ['2', 'match -> collect', 2, 'RUNNING'],
    ]);
    expect(r.body.vertices[0].metrics['read-records']).toBe(200);
    expect(r.body.vertices[0].metrics['write-records']).toBe(200);
    expect(r.body.vertices[2].operators.map((o: any) => o.uid)).toEqual(['match', 'sink']);
    expect(r.body.plan.nodes[2].inputs.map((i: any) => [i.id, i.ship_strategy])).toEqual([
      ['0', 'HASH'],
      ['1', 'HASH'],
    ]);
  });

  it('GET /jobs/:id/checkpoints has counts, summaries, latest and history', async () => {
    const r = await web.get(`/jobs/${jid}/checkpoints`);
    expect(r.status).toBe(200);
    expect(r.body.counts).toMatchObject({ completed: 1, failed: 0, in_progress: 0, total: 1, restored: 0 });
    for (const k of ['end_to_end_duration', 'checkpointed_size', 'state_size', 'persisted_data']) {
      expect(Object.keys(r.body.summary[k])).toEqual(['min', 'max', 'avg', 'p50', 'p90', 'p99']);
    }
    expect(r.body.summary.state_size.max).toBeGreaterThan(0);
    expect(r.body.latest.completed).toMatchObject({
      id: cid,
      status: 'COMPLETED',
      checkpoint_type: 'CHECKPOINT',
      num_subtasks: 6,
      num_acknowledged_subtasks: 6,
    });
    expect(r.body.history.map((h: any) => h.id)).toEqual([cid]);
  });

  it('GET /jobs/:id/checkpoints/details/:cid has one entry per vertex', async () => {
    const r = await web.get(`/jobs/${jid}/checkpoints/details/${cid}`);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(cid);
    expect(Object.keys(r.body.tasks)).toEqual(['0', '1', '2']);
    for (const t of Object.values(r.body.tasks) as any[]) expect(t).toMatchObject({ status: 'COMPLETED', num_subtasks: 2, num_acknowledged_subtasks: 2 });
    expect(r.body.tasks['2'].state_size).toBeGreaterThan(0);
  });

  it('GET .../subtasks/:vid has per-subtask sync, async, alignment, bytes and barrier arrivals per channel', async () => {
    const r = await web.get(`/jobs/${jid}/checkpoints/details/${cid}/subtasks/2`);
    expect(r.status).toBe(200);
    expect(r.body.subtasks).toHaveLength(2);
    const trigger = (await web.get(`/jobs/${jid}/checkpoints/details/${cid}`)).body.trigger_timestamp;
    for (const s of r.body.subtasks) {
      expect(s.status).toBe('completed');
      expect(s.unaligned_checkpoint).toBe(false);
      expect(s.ack_timestamp).toBeGreaterThanOrEqual(trigger);
      expect(s.end_to_end_duration).toBe(s.ack_timestamp - trigger);
      expect(typeof s.checkpoint.sync).toBe('number');
      expect(typeof s.checkpoint.async).toBe('number');
      expect(s.alignment).toMatchObject({ persisted: 0 });
      expect(s.state_size).toBeGreaterThan(0);
      expect(s.barrier_arrivals.map((a: any) => a.from)).toEqual([
        { vertex: '0', subtask: 0 },
        { vertex: '0', subtask: 1 },
        { vertex: '1', subtask: 0 },
        { vertex: '1', subtask: 1 },
      ]);
      for (const a of s.barrier_arrivals) {
        expect(a.timestamp).toBeLessThanOrEqual(s.sync_start_timestamp);
        expect(a.queued_ahead).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('GET .../flow lists the barrier flow in time order, matching the details', async () => {
    const r = await web.get(`/jobs/${jid}/checkpoints/details/${cid}/flow`);
    expect(r.status).toBe(200);
    const types = r.body.events.map((e: any) => e.type);
    const count = (t: string) => types.filter((x: string) => x === t).length;
    expect(types[0]).toBe('trigger');
    expect(count('inject')).toBe(4);
    expect(count('barrier')).toBe(8);
    expect(count('sync')).toBe(6);
    expect(count('async')).toBe(6);
    expect(count('ack')).toBe(6);
    expect(count('complete')).toBe(1);
    expect(count('notify')).toBe(1);
    const times = r.body.events.map((e: any) => e.t);
    expect(times).toEqual([...times].sort((a: number, b: number) => a - b));
    expect(r.body.channels).toHaveLength(8);
  });

  it('GET /jobs/:id/checkpoints/config is the checkpointing configuration', async () => {
    const r = await web.get(`/jobs/${jid}/checkpoints/config`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: 'exactly_once', interval: -1, max_concurrent: 1, retained: 3, unaligned_checkpoints: false });
  });

  it('timestamps are whole milliseconds; a checkpoint retention deleted is discarded, without its path; vertices have names', async () => {
    // Three more: with 3 retained, the first is deleted from storage.
    for (let i = 0; i < 3; i++) await job.client.triggerCheckpoint();
    const all = (await web.get(`/jobs/${jid}/checkpoints`)).body;
    const first = all.history.find((h: any) => h.id === cid);
    expect(first).toMatchObject({ status: 'COMPLETED', discarded: true, external_path: null });
    const newest = all.history[0];
    expect(newest.discarded).toBe(false);
    expect(existsSync(newest.external_path)).toBe(true);
    const details = (await web.get(`/jobs/${jid}/checkpoints/details/${newest.id}`)).body;
    expect(Object.values(details.tasks).map((t: any) => t.name)).toEqual(['orders', 'payments', 'match -> collect']);
    const sub = (await web.get(`/jobs/${jid}/checkpoints/details/${newest.id}/subtasks/2`)).body;
    const flow = (await web.get(`/jobs/${jid}/checkpoints/details/${cid}/flow`)).body;
    expect(flow.events.find((e: any) => e.type === 'complete')).toMatchObject({ location: null, discarded: true });
    const stamps: Array<[string, number]> = [];
    const walk = (x: unknown, path: string): void => {
      if (Array.isArray(x)) for (const [i, y] of x.entries()) walk(y, `${path}[${i}]`);
      else if (typeof x === 'object' && x !== null) for (const [k, v] of Object.entries(x)) walk(v, `${path}.${k}`);
      else if (typeof x === 'number' && /(timestamp|-time|\.now|end_to_end_duration)$/.test(path)) stamps.push([path, x]);
    };
    walk({ all, details, sub, trigger: flow.trigger_timestamp, job: (await web.get(`/jobs/${jid}`)).body }, '');
    expect(stamps.length).toBeGreaterThan(20);
    expect(stamps.filter(([, v]) => !Number.isInteger(v))).toEqual([]);
    for (const s of sub.subtasks) expect(s.end_to_end_duration).toBe(s.ack_timestamp - details.trigger_timestamp);
  });

  it('GET /jobs/:id/backpressure has a ratio and level per subtask', async () => {
    const r = await until(
      () => web.get(`/jobs/${jid}/backpressure`),
      (x) => x.body.status === 'ok',
    );
    expect(r.body.vertices.map((v: any) => v.subtasks.length)).toEqual([2, 2, 2]);
    for (const v of r.body.vertices) {
      for (const s of v.subtasks) {
        expect(s.backPressuredRatio).toBeGreaterThanOrEqual(0);
        expect(s.backPressuredRatio).toBeLessThanOrEqual(1);
        expect(['ok', 'low', 'high']).toContain(s.backpressureLevel);
      }
    }
  });

  it("GET /jobs/:id/vertices/:vid/backpressure is one vertex in Flink's shape", async () => {
    const r = await web.get(`/jobs/${jid}/vertices/2/backpressure`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['backpressureLevel', 'end-timestamp', 'status', 'subtasks']);
    expect(r.body.subtasks.map((s: any) => s.subtask)).toEqual([0, 1]);
    const none = await web.get(`/jobs/${jid}/vertices/7/backpressure`);
    expect(none.status).toBe(404);
    expect(none.body.errors[0]).toContain("'7'");
  });

  it('GET /jobs/:id/taskmanagers is empty for a job whose subtasks run in this thread', async () => {
    const r = await web.get(`/jobs/${jid}/taskmanagers`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ taskmanagers: [] });
  });

  it('errors are JSON naming what is wrong', async () => {
    const nojob = await web.get('/jobs/nope');
    expect(nojob.status).toBe(404);
    expect(nojob.body.errors[0]).toContain("'nope'");
    const nocp = await web.get(`/jobs/${jid}/checkpoints/details/999`);
    expect(nocp.status).toBe(404);
    expect(nocp.body.errors[0]).toContain("'999'");
    const novertex = await web.get(`/jobs/${jid}/checkpoints/details/${cid}/subtasks/9`);
    expect(novertex.status).toBe(404);
    expect(novertex.body.errors[0]).toContain("'9'");
    const wrongMethod = await web.get(`/jobs/${jid}/stop`);
    expect(wrongMethod.status).toBe(405);
    const noRoute = await web.get('/jobs/x/y/z');
    expect(noRoute.status).toBe(404);
    expect(noRoute.body.errors[0]).toContain('/jobs/x/y/z');
  });

  it('POST routes need the token, JSON, and a target directory', async () => {
    const none = await web.post(`/jobs/${jid}/savepoints`, { 'target-directory': '/tmp/x' }, null);
    expect(none.status).toBe(401);
    expect(none.body.errors[0]).toContain('Authorization');
    const wrong = await web.post(`/jobs/${jid}/savepoints`, { 'target-directory': '/tmp/x' }, 'wrong-token-12');
    expect(wrong.status).toBe(401);
    const text = await web.post(`/jobs/${jid}/savepoints`, 'x', TOKEN, { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    const missing = await web.post(`/jobs/${jid}/savepoints`, {}, TOKEN);
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toContain("'target-directory'");
    const relative = await web.post(`/jobs/${jid}/savepoints`, { 'target-directory': 'sp' }, TOKEN);
    expect(relative.status).toBe(400);
    expect(relative.body.errors[0]).toContain("'sp'");
    const unknown = await web.get(`/jobs/${jid}/savepoints/sp-999`);
    expect(unknown.status).toBe(404);
  });

  it('a request naming another host is refused (no DNS rebinding)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.get(`${server.address}/jobs`, { headers: { host: 'evil.example:80' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    expect(status).toBe(403);
  });

  it('POST /jobs/:id/savepoints takes a savepoint asynchronously; the status route gives its location', async () => {
    const dir = tempDir('weir-rest-sp-');
    const r = await web.post(`/jobs/${jid}/savepoints`, { 'target-directory': dir }, TOKEN);
    expect(r.status).toBe(202);
    const id = r.body['request-id'];
    const done = await until(
      () => web.get(`/jobs/${jid}/savepoints/${id}`),
      (x) => x.body.status.id === 'COMPLETED',
    );
    expect(done.body.operation.location.startsWith(dir)).toBe(true);
    const cps = await web.get(`/jobs/${jid}/checkpoints`);
    expect(cps.body.latest.savepoint.checkpoint_type).toBe('SAVEPOINT');
  });

  it('POST /jobs/:id/stop stops the job with a savepoint', async () => {
    const dir = tempDir('weir-rest-stop-');
    const r = await web.post(`/jobs/${jid}/stop`, { targetDirectory: dir }, TOKEN);
    expect(r.status).toBe(202);
    const done = await until(
      () => web.get(`/jobs/${jid}/savepoints/${r.body['request-id']}`),
      (x) => x.body.status.id === 'COMPLETED',
    );
    expect(done.body.operation.location.startsWith(dir)).toBe(true);
    expect((await job.client.result).status).toBe('FINISHED');
    expect(stopped).toBe(done.body.operation.location);
    expect((await web.get('/jobs')).body.jobs[0].status).toBe('FINISHED');
    // The clock stops at the end (Flink's end-time and duration).
    const ended = (await web.get(`/jobs/${jid}`)).body;
    await new Promise((r) => setTimeout(r, 30));
    const later = (await web.get(`/jobs/${jid}`)).body;
    expect(ended['end-time']).toBeGreaterThan(0);
    expect(ended.duration).toBe(ended['end-time'] - ended['start-time']);
    expect([later['end-time'], later.duration]).toEqual([ended['end-time'], ended.duration]);
    const again = await web.post(`/jobs/${jid}/stop`, { targetDirectory: dir }, TOKEN);
    expect(again.status).toBe(409);
  });
});
