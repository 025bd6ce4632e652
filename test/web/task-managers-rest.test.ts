/**
 * `GET /jobs/:id/taskmanagers`, its part of the live update, and the per-task-manager series of
 * `/metrics`, for a keyed count (a keyBy shuffle) on two in-memory task managers, the second with
 * a wall clock 5 s ahead.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CollectSink, type JobClient, StreamEnvironment } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import type { TaskManagers } from '../../src/web/rest/responses.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { whenRunning } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob } from '../support/jobs.ts';
import { until, webClient } from './web-client.ts';

/** The value of each sample line `name{labels} value` whose labels include all of `labels`. */
function samples(text: string, name: string, labels: Record<string, string> = {}): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

describe('task managers over REST and /metrics', () => {
  const gate = new SourceGate(0);
  let client: JobClient;
  let master: JobMaster;
  let server: WebServer;
  let web: ReturnType<typeof webClient>;

  beforeAll(async () => {
    const env = StreamEnvironment.create({ parallelism: 2, heartbeat: { intervalMs: 20, timeoutMs: 10_000 }, slotsPerTaskManager: 2 });
    buildKeyedCountJob(env, new CollectSink<string>(), { count: 1_000_000, keys: 20, gate });
    let m: JobMaster | null = null;
    client = await env.executeAsync('tm-rest', {
      inMemoryTaskManagers: 2,
      taskManagerClockSkewMs: (index) => (index === 1 ? 5_000 : 0),
      onJobMaster: (x) => (m = x),
    });
    master = m!;
    await whenRunning(client);
    server = await startWebServer({ client, master, token: 'tm-token', sampleIntervalMs: 50 });
    web = webClient(server.address, '');
    gate.allowUpTo(1_000);
    await gate.reached(2);
  });
  afterAll(async () => {
    gate.open();
    await client.cancel();
    await server.close();
  });

  it('GET /jobs/:id/taskmanagers lists each with where it runs, its state, heartbeat, clock offset, data bytes and subtasks', async () => {
    const r = await until(
      () => web.get(`/jobs/${client.jobId}/taskmanagers`),
      (x) => x.body.taskmanagers?.every((t: any) => t.dataBytesReceived > 0 && t.clockOffset !== null),
    );
    expect(r.status).toBe(200);
    const body = r.body as TaskManagers;
    expect(body.taskmanagers.map((t) => t.id)).toEqual(['0', '1']);
    for (const t of body.taskmanagers) {
      expect(Object.keys(t).sort()).toEqual(
        [
          'clockOffset',
          'dataAddress',
          'dataBytesReceived',
          'dataBytesSent',
          'dataMessagesReceived',
          'dataMessagesSent',
          'heartbeatAge',
          'host',
          'id',
          'pid',
          'roundTrip',
          'slotsNumber',
          'slotsUsed',
          'state',
          'subtasks',
          'transport',
        ].sort(),
      );
      expect(t).toMatchObject({ host: hostname(), pid: null, transport: 'in-memory', dataAddress: null, slotsNumber: 2, slotsUsed: 1, state: 'running' });
      expect(Number.isInteger(t.heartbeatAge)).toBe(true);
      expect(t.roundTrip).toBeGreaterThanOrEqual(0);
      expect(t.dataBytesSent).toBeGreaterThan(0);
      expect(t.dataMessagesSent).toBeGreaterThan(0);
      expect(t.subtasks).toEqual([
        { vertex: '0', subtask: Number(t.id) },
        { vertex: '1', subtask: Number(t.id) },
      ]);
    }
    const [tm0, tm1] = body.taskmanagers;
    // Clocks anchored on whole milliseconds: within 1 ms beyond the uncertainty.
    expect(Math.abs(tm0!.clockOffset!.offset)).toBeLessThanOrEqual(tm0!.clockOffset!.uncertainty + 1);
    expect(Math.abs(tm1!.clockOffset!.offset - 5_000)).toBeLessThanOrEqual(tm1!.clockOffset!.uncertainty + 1);
  });

  it('the live update carries the same list', async () => {
    const res = await fetch(`${server.address}/events`);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const update = JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n\n')));
    expect(update.taskmanagers.taskmanagers.map((t: any) => [t.id, t.transport])).toEqual([
      ['0', 'in-memory'],
      ['1', 'in-memory'],
    ]);
  });

  it('/metrics has per-task-manager data bytes, state, heartbeat age, round trip and clock offset', async () => {
    const text = (
      await until(
        () => web.get('/metrics'),
        (r) => samples(r.body as string, 'weir_taskmanager_clock_offset_seconds').length === 2,
      )
    ).body as string;
    for (const tm of ['0', '1']) {
      const labels = { taskmanager: tm, host: hostname() };
      expect(samples(text, 'weir_taskmanager_data_sent_bytes_total', labels)[0]).toBeGreaterThan(0);
      expect(samples(text, 'weir_taskmanager_data_received_bytes_total', labels)[0]).toBeGreaterThan(0);
      expect(samples(text, 'weir_taskmanager_state', { ...labels, state: 'running' })).toEqual([1]);
      expect(samples(text, 'weir_taskmanager_state', { ...labels, state: 'dead' })).toEqual([0]);
      expect(samples(text, 'weir_taskmanager_heartbeat_age_seconds', labels)[0]).toBeGreaterThanOrEqual(0);
      expect(samples(text, 'weir_taskmanager_round_trip_seconds', labels)[0]).toBeGreaterThanOrEqual(0);
    }
    expect(samples(text, 'weir_taskmanager_clock_offset_seconds', { taskmanager: '1' })[0]).toBeCloseTo(5, 2);
    // Counters follow the totals: a later scrape never counts less.
    gate.allowUpTo(2_000);
    await gate.reached(2);
    const later = (
      await until(
        () => web.get('/metrics'),
        (r) =>
          samples(r.body as string, 'weir_taskmanager_data_sent_bytes_total', { taskmanager: '0' })[0]! >
          samples(text, 'weir_taskmanager_data_sent_bytes_total', { taskmanager: '0' })[0]!,
      )
    ).body as string;
    expect(samples(later, 'weir_taskmanager_data_received_bytes_total', { taskmanager: '1' })[0]).toBeGreaterThanOrEqual(
      samples(text, 'weir_taskmanager_data_received_bytes_total', { taskmanager: '1' })[0]!,
    );
  });
});
