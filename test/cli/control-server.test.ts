import * as http from 'node:http';
import { describe, expect, it } from 'vitest';
import type { JobClient, JobMetrics, JobResult } from '../../src/index.ts';
import { callControl, type ControlTarget } from '../../src/cli/control-client.ts';
import { startControlServer } from '../../src/cli/control-server.ts';
import { UsageError } from '../../src/cli/exit.ts';

/** A JobClient whose stop ends the "job" only when the test says so. */
function fakeClient() {
  let status: JobMetrics['status'] = 'RUNNING';
  let finish!: () => void;
  const ended = new Promise<void>((r) => (finish = r));
  const calls: string[] = [];
  const client: JobClient = {
    jobId: 'fake-000001',
    result: ended.then((): JobResult => ({ jobId: 'fake-000001', status: 'FINISHED', restarts: 0, checkpoints: [], lastCheckpointLocation: null })),
    metrics: () => ({ status, attempt: 0, recordsIn: 7, recordsOut: 5, recordsInTotal: 7, recordsOutTotal: 5, lastCheckpoint: null }),
    cancel: async () => {
      calls.push('cancel');
      status = 'CANCELED';
    },
    triggerCheckpoint: () => Promise.reject(new Error('not used')),
    savepoint: async (dir) => {
      calls.push(`savepoint ${dir}`);
      if (dir.includes('fail')) throw new Error('savepoint 3 failed: disk full\nsecond line');
      return `${dir}/savepoint-3-abc`;
    },
    stopWithSavepoint: async (dir) => {
      calls.push(`stop ${dir}`);
      await ended;
      status = 'FINISHED';
      return `${dir}/savepoint-4-def`;
    },
    cancelWithSavepoint: async (dir) => `${dir}/savepoint-5-0a1`,
  };
  return { client, calls, finish };
}

const TOKEN = 'a'.repeat(64);

function targetOf(address: string, token = TOKEN): ControlTarget {
  return { address, token, label: `the job at ${address}` };
}

/** One raw GET with the given headers: the status code. */
function rawGet(address: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL('/status', address), { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('control endpoint (in process)', () => {
  it('answers only requests that carry the job token (401 otherwise) and name the loopback host (403 otherwise)', async () => {
    const { client } = fakeClient();
    const server = await startControlServer(client, TOKEN);
    const port = new URL(server.address).port;
    try {
      expect(await rawGet(server.address, {})).toBe(401);
      expect(await rawGet(server.address, { authorization: `Bearer ${'b'.repeat(64)}` })).toBe(401);
      expect(await rawGet(server.address, { authorization: `Bearer ${TOKEN.slice(1)}` })).toBe(401);
      expect(await rawGet(server.address, { authorization: TOKEN })).toBe(401);
      expect(await rawGet(server.address, { authorization: `Bearer ${TOKEN}` })).toBe(200);
      expect(await rawGet(server.address, { authorization: `Bearer ${TOKEN}`, host: `evil.example:${port}` })).toBe(403);
      const refused = await callControl(targetOf(server.address, 'c'.repeat(64)), 'GET', '/status').catch((e: unknown) => e as Error);
      expect(refused).toBeInstanceOf(UsageError);
      expect(refused.message).toContain('wrong control token');
      expect(await callControl(targetOf(server.address), 'GET', '/status')).toMatchObject({ jobId: 'fake-000001', status: 'RUNNING' });
    } finally {
      await server.close();
    }
  });

  it('serves status and savepoints, maps failures to 4xx/5xx, and answers a stop before it closes', async () => {
    const { client, calls, finish } = fakeClient();
    const server = await startControlServer(client, TOKEN);
    const target = targetOf(server.address);
    try {
      expect(await callControl(target, 'GET', '/status')).toMatchObject({ jobId: 'fake-000001', status: 'RUNNING', recordsIn: 7, recordsOut: 5 });
      expect(await callControl(target, 'POST', '/savepoint', { dir: '/sp' })).toEqual({ jobId: 'fake-000001', location: '/sp/savepoint-3-abc' });
      await expect(callControl(target, 'POST', '/savepoint', { dir: 'relative' })).rejects.toBeInstanceOf(UsageError);
      await expect(callControl(target, 'POST', '/savepoint', {})).rejects.toThrow("'dir'");
      const failed = await callControl(target, 'POST', '/savepoint', { dir: '/fail' }).catch((e: unknown) => e as Error);
      expect(failed).not.toBeInstanceOf(UsageError);
      expect(failed.message).toBe(`${target.label}: savepoint 3 failed: disk full | second line`);
      await expect(callControl(target, 'POST', '/cancel', { dir: '/x' })).rejects.toThrow("'dir' is for a savepoint");

      const stop = callControl(target, 'POST', '/stop', { dir: '/sp' });
      while (!calls.includes('stop /sp')) await new Promise((r) => setTimeout(r, 5));
      finish();
      await client.result;
      // The run ends and closes its endpoint: the stop in progress still gets its answer.
      await server.close();
      expect(await stop).toEqual({ jobId: 'fake-000001', location: '/sp/savepoint-4-def' });
      expect(server.stoppedWithSavepoint).toBe('/sp/savepoint-4-def');
    } finally {
      await server.close();
    }
  });

  it('refuses requests once the job has ended', async () => {
    const { client } = fakeClient();
    const server = await startControlServer(client, TOKEN);
    const target = targetOf(server.address);
    try {
      await callControl(target, 'POST', '/cancel', {});
      expect(server.cancelRequested).toBe(true);
      await expect(callControl(target, 'POST', '/savepoint', { dir: '/sp' })).rejects.toThrow('has ended (CANCELED)');
    } finally {
      await server.close();
    }
  });
});
