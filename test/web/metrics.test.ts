import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { webClient } from './web-client.ts';

/** The value of one sample line `name{labels} value` whose labels include all of `labels`. */
function samples(text: string, name: string, labels: Record<string, string> = {}): number[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

describe('/metrics (Prometheus text format)', () => {
  let job: RunningWebJob;
  let server: WebServer;

  beforeAll(async () => {
    job = await startWebJob({ parallelism: 2 });
    server = await startWebServer({ client: job.client, master: job.master, token: 'metrics-token', sampleIntervalMs: 50 });
    job.gate.allowUpTo(50);
    await job.gate.reached(2);
    await job.client.triggerCheckpoint();
    await job.client.triggerCheckpoint();
  });
  afterAll(async () => {
    await job.client.cancel();
    await server.close();
  });

  it('a scrape has records per operator, rates, backpressure, checkpoint histograms, restarts and the last checkpoint age', async () => {
    const r = await webClient(server.address, '').get('/metrics');
    expect(r.status).toBe(200);
    const text = r.body as string;
    expect(samples(text, 'weir_records_in_total', { vertex_name: 'orders' }).reduce((a, b) => a + b, 0)).toBe(100);
    expect(samples(text, 'weir_records_out_total', { vertex_name: 'payments' }).reduce((a, b) => a + b, 0)).toBe(100);
    expect(samples(text, 'weir_records_in_per_second')).toHaveLength(3);
    expect(samples(text, 'weir_backpressured_ratio')).toHaveLength(6);
    expect(samples(text, 'weir_checkpoints_total', { status: 'completed' })).toEqual([2]);
    expect(samples(text, 'weir_checkpoint_duration_seconds_count')).toEqual([2]);
    expect(samples(text, 'weir_checkpoint_size_bytes_count')).toEqual([2]);
    expect(samples(text, 'weir_checkpoint_alignment_seconds_count')).toEqual([12]);
    expect(samples(text, 'weir_restarts_total')).toEqual([0]);
    const age = samples(text, 'weir_last_checkpoint_age_seconds');
    expect(age).toHaveLength(1);
    expect(age[0]).toBeGreaterThanOrEqual(0);
    expect(samples(text, 'weir_job_status', { status: 'RUNNING' })).toEqual([1]);
    expect(text).toContain(`job_id="${job.client.jobId}"`);
    // a second scrape counts nothing twice
    const again = (await webClient(server.address, '').get('/metrics')).body as string;
    expect(samples(again, 'weir_checkpoints_total', { status: 'completed' })).toEqual([2]);
    expect(samples(again, 'weir_records_in_total', { vertex_name: 'orders' }).reduce((a, b) => a + b, 0)).toBe(100);
  });
});
