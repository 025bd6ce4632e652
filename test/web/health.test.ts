/**
 * The health routes of a job master process (`/healthz`, `/readyz`, `/ha`): the pure answers, and
 * a listener bound before any job runs (a standby) over real sockets, on loopback (the Host header
 * checked) and on every address (a Kubernetes probe dials the pod's address with its own Host).
 */
import * as http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { healthAnswer, type HaRole } from '../../src/web/health.ts';
import { openWebListener, type WebListener } from '../../src/web/listener.ts';

const STANDBY: HaRole = { role: 'standby', job: 'orders', leader: 'host-a:41:abc', epoch: 7, store: 'postgres://weir:***@db:5432/weir' };
const LEADER: HaRole = { role: 'leader', job: 'orders', epoch: 8, store: 'postgres://weir:***@db:5432/weir' };

describe('healthAnswer', () => {
  it('alive always; ready only when leading (or without HA) with the job RUNNING; /ha names the leader and epoch', () => {
    expect(healthAnswer('/healthz', STANDBY, null)).toEqual({ status: 200, body: { status: 'alive' } });
    expect(healthAnswer('/readyz', STANDBY, null)).toEqual({
      status: 503,
      body: { ready: false, reason: "this job master is a standby (job 'orders' is led by host-a:41:abc)", ...healthAnswer('/ha', STANDBY, null)!.body },
    });
    expect(healthAnswer('/ha', STANDBY, null)!.body).toEqual({
      role: 'standby',
      job: 'orders',
      leader: 'host-a:41:abc',
      'leader-epoch': 7,
      store: 'postgres://weir:***@db:5432/weir',
    });
    expect(healthAnswer('/readyz', LEADER, 'RUNNING')).toEqual({
      status: 200,
      body: {
        ready: true,
        role: 'leader',
        job: 'orders',
        'leader-epoch': 8,
        store: 'postgres://weir:***@db:5432/weir',
        standbys: [],
        'job-status': 'RUNNING',
      },
    });
    // The standbys the store listed at the leader's last look, as the dashboard shows them.
    expect(
      healthAnswer('/ha', { ...LEADER, standbys: [{ holder: 'host-b:52:def', address: 'http://10.0.0.2:8081', seenMsAgo: 420 }] }, 'RUNNING')!.body,
    ).toMatchObject({ role: 'leader', standbys: [{ holder: 'host-b:52:def', address: 'http://10.0.0.2:8081', 'seen-ms-ago': 420 }] });
    expect(healthAnswer('/readyz', LEADER, 'RESTARTING')!.status).toBe(503);
    expect(healthAnswer('/readyz', { role: 'single' }, 'RUNNING')!.status).toBe(200);
    expect(healthAnswer('/readyz', { role: 'single' }, 'FINISHED')!.body.reason).toBe('the job is FINISHED');
    expect(healthAnswer('/readyz', { role: 'starting' }, null)!.status).toBe(503);
    expect(healthAnswer('/jobs', LEADER, 'RUNNING')).toBeNull();
  });
});

const listeners: WebListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close();
});

function get(port: number, pathname: string, host: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
  });
}

describe('a web port bound before the job (a standby)', () => {
  it('answers the health routes from its role, 503 for the rest, and checks the Host header on loopback', async () => {
    const l = await openWebListener(0);
    listeners.push(l);
    expect(l.address).toBe(`http://127.0.0.1:${l.port}`);
    const host = `127.0.0.1:${l.port}`;
    expect(await get(l.port, '/healthz', host)).toEqual({ status: 200, body: { status: 'alive' } });
    expect((await get(l.port, '/readyz', host)).body).toMatchObject({ ready: false, reason: 'the job is not started', role: 'single' });
    l.role = STANDBY;
    expect(await get(l.port, '/ha', host)).toEqual({ status: 200, body: healthAnswer('/ha', STANDBY, null)!.body });
    expect((await get(l.port, '/readyz/', host)).status).toBe(503);
    const jobs = await get(l.port, '/jobs', host);
    expect(jobs.status).toBe(503);
    expect(jobs.body.errors).toEqual(["no job runs in this process yet: it is a standby of job 'orders' (led by host-a:41:abc); see GET /ha"]);
    // A probe from another pod names the pod's address: refused on loopback (no DNS rebinding).
    expect((await get(l.port, '/healthz', `10.1.2.3:${l.port}`)).status).toBe(403);
  });

  it('bound on every address (--web-host 0.0.0.0), a request naming another host is answered', async () => {
    const l = await openWebListener(0, '0.0.0.0');
    listeners.push(l);
    expect(l.address).toBe(`http://0.0.0.0:${l.port}`);
    l.role = LEADER;
    expect(await get(l.port, '/healthz', `10.1.2.3:${l.port}`)).toEqual({ status: 200, body: { status: 'alive' } });
    expect((await get(l.port, '/ha', `10.1.2.3:${l.port}`)).body).toMatchObject({ role: 'leader', 'leader-epoch': 8 });
  });

  it('a host that is not this one is a WebPortError naming it', async () => {
    await expect(openWebListener(0, '192.0.2.77')).rejects.toThrow('192.0.2.77 is not an address of this host');
  });
});
