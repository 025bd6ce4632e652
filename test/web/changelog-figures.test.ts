/**
 * The changelog state backend's figures leave the subtasks: `GET /jobs/:id/changelog` per subtask
 * and per vertex, and `/metrics`, over every attempt. A real job (the web test job, its keyed
 * two-input operator on the changelog backend over embedded) on checkpoint storage in memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { seriesSum, until, webClient } from './web-client.ts';

const CHANGELOG = { type: 'changelog', over: { type: 'embedded' }, materializationIntervalMs: 50, uploadDelayMs: 1 } as const;

describe('changelog figures in REST and /metrics', () => {
  let job: RunningWebJob | null = null;
  let server: WebServer | null = null;
  afterEach(async () => {
    await job?.client.cancel();
    await server?.close();
    job = null;
    server = null;
  });

  it('per subtask: bytes uploaded growing, a materialization with its size and age; the vertex totals and /metrics agree', async () => {
    const startedMs = performance.now();
    job = await startWebJob({ parallelism: 2, stateBackend: CHANGELOG });
    server = await startWebServer({ client: job.client, master: job.master, token: 'changelog-token', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    job.gate.allowUpTo(100);
    const first = await until(
      () => web.get(`/jobs/${jid}/changelog`),
      (r) => r.body.vertices.length === 1 && r.body.vertices[0].totals['uploaded-bytes'] > 0,
    );
    const v = first.body.vertices[0];
    expect(v.name).toContain('match');
    expect(v.subtasks.map((s: { subtask: number }) => s.subtask)).toEqual([0, 1]);
    // Checkpoints after the materialization interval adopt a materialization.
    await new Promise((r) => setTimeout(r, 60));
    await job.client.triggerCheckpoint();
    job.gate.allowUpTo(300);
    await job.client.triggerCheckpoint();
    const later = (
      await until(
        () => web.get(`/jobs/${jid}/changelog`),
        (r) =>
          r.body.vertices[0].subtasks.every((s: { materializations: number }) => s.materializations >= 1) &&
          r.body.vertices[0].totals['uploaded-bytes'] > v.totals['uploaded-bytes'],
      )
    ).body.vertices[0];
    for (const s of later.subtasks) {
      expect(s['materialized-bytes']).toBeGreaterThan(0);
      expect(s['materialization-age-ms']).toBeGreaterThanOrEqual(0);
      expect(s['materialization-age-ms']).toBeLessThanOrEqual(performance.now() - startedMs);
      expect(s.uploads).toBeGreaterThan(0);
    }
    expect(later.totals['uploaded-bytes']).toBe(later.subtasks.reduce((n: number, s: { 'uploaded-bytes': number }) => n + s['uploaded-bytes'], 0));
    expect(later.totals['materialization-age-ms']).toBe(
      Math.max(...later.subtasks.map((s: { 'materialization-age-ms': number }) => s['materialization-age-ms'])),
    );
    // /metrics reads the same totals (the job is held: nothing moves between the two answers but ages).
    const [rest, metrics] = [(await web.get(`/jobs/${jid}/changelog`)).body.vertices[0], (await web.get('/metrics')).body as string];
    expect(seriesSum(metrics, 'weir_changelog_uploaded_bytes_total', v.id)).toBe(rest.totals['uploaded-bytes']);
    expect(seriesSum(metrics, 'weir_changelog_materializations_total', v.id)).toBe(rest.totals.materializations);
    expect(seriesSum(metrics, 'weir_changelog_materialized_bytes', v.id)).toBe(rest.totals['materialized-bytes']);
    expect(metrics).toMatch(/^weir_changelog_materialization_age_seconds\{[^}]*subtask="0"[^}]*\} \d/m);
  });

  it('totals over attempts: after a restart the uploaded bytes and materializations count both attempts', async () => {
    job = await startWebJob({ parallelism: 2, stateBackend: CHANGELOG, throwAtRecord: 60 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'changelog-restart', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    job.gate.allowUpTo(20);
    await until(
      () => web.get(`/jobs/${jid}/changelog`),
      (r) => r.body.vertices[0]?.subtasks[0]['uploaded-bytes'] > 0,
    );
    await new Promise((r) => setTimeout(r, 60));
    await job.client.triggerCheckpoint();
    const before = (
      await until(
        () => web.get(`/jobs/${jid}/changelog`),
        (r) => r.body.vertices[0].subtasks[0].materializations >= 1,
      )
    ).body.vertices[0].subtasks[0];
    job.gate.allowUpTo(200); // subtask 0 of match fails at its 60th record of the first input
    const vertex = (await web.get(`/jobs/${jid}/changelog`)).body.vertices[0].id;
    const after = (
      await until(
        () => web.get(`/jobs/${jid}`),
        (r) => r.body.restarts === 1 && r.body.state === 'RUNNING',
      ).then(() =>
        until(
          () => web.get(`/jobs/${jid}/changelog`),
          (r) => r.body.vertices[0].subtasks[0]['restores-by-replay'] >= 1,
        ),
      )
    ).body.vertices[0].subtasks[0];
    expect(after['uploaded-bytes']).toBeGreaterThanOrEqual(before['uploaded-bytes']);
    expect(after.materializations).toBeGreaterThanOrEqual(before.materializations);
    const metrics = (await web.get('/metrics')).body as string;
    expect(seriesSum(metrics, 'weir_changelog_uploaded_bytes_total', vertex)).toBeGreaterThanOrEqual(before['uploaded-bytes']);
  });

  it('task managers on clocks an hour ahead and an hour behind the job master: each materialization age is the time since it, growing as time passes', async () => {
    const startedMs = performance.now();
    job = await startWebJob({ parallelism: 2, stateBackend: CHANGELOG, inMemoryTaskManagers: { count: 2, clockSkewMs: [3_600_000, -3_600_000] } });
    server = await startWebServer({ client: job.client, master: job.master, token: 'changelog-skew', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    const jid = job.client.jobId;
    job.gate.allowUpTo(100);
    await until(
      () => web.get(`/jobs/${jid}/changelog`),
      (r) => r.body.vertices[0]?.totals['uploaded-bytes'] > 0,
    );
    await new Promise((r) => setTimeout(r, 60));
    await job.client.triggerCheckpoint();
    // No checkpoint from here on, so no materialization: the ages only grow.
    const ages = async (): Promise<number[]> => {
      const body = (
        await until(
          () => web.get(`/jobs/${jid}/changelog`),
          (r) => r.body.vertices[0].subtasks.every((x: { materializations: number }) => x.materializations >= 1),
        )
      ).body;
      return body.vertices[0].subtasks.map((x: { 'materialization-age-ms': number }) => x['materialization-age-ms']);
    };
    const first = await ages();
    const firstAtMs = performance.now();
    await new Promise((r) => setTimeout(r, 400));
    const second = await ages();
    const elapsedMs = performance.now() - startedMs;
    for (let i = 0; i < 2; i++) {
      // Off by an hour (or stuck at 0) when read naively on the job master's clock.
      expect(second[i]).toBeLessThanOrEqual(elapsedMs);
      expect(second[i]! - first[i]!).toBeGreaterThanOrEqual(350);
      expect(second[i]! - first[i]!).toBeLessThanOrEqual(performance.now() - firstAtMs + 50);
    }
  });

  it('a job without the changelog backend answers no vertices and has no changelog series', async () => {
    job = await startWebJob({ parallelism: 1 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'no-changelog', sampleIntervalMs: 50 });
    const web = webClient(server.address, '');
    expect((await web.get(`/jobs/${job.client.jobId}/changelog`)).body.vertices).toEqual([]);
    expect((await web.get('/metrics')).body).not.toMatch(/^weir_changelog_\w+\{/m);
  });
});
