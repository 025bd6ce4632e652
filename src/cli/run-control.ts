/**
 * The control side of one `weir run`: starts the job's control endpoint, registers it under the job
 * id, and undoes both when the run ends — also when the process exits early (a second Ctrl-C).
 */
import { systemClock } from '../core/adapters.ts';
import { errorMessage } from '../core/errors.ts';
import type { JobClient } from '../index.ts';
import type { JobMaster } from '../internal.ts';
import type { WebListener, WebServer } from '../web/server.ts';
import { startControlServer, type ControlServer } from './control-server.ts';
import { openDashboard } from './dashboard.ts';
import { isoTime, oneLine } from './format.ts';
import { newControlToken, registerJob, unregisterJob, type RegisteredHa } from './job-registry.ts';
import { ensureRegistryDir } from './registry-dir.ts';

export interface RunControl {
  /** The endpoint, or null when it could not start (the job runs on without it). */
  readonly server: ControlServer | null;
  /** The dashboard and REST API, or null when it could not start. */
  readonly dashboard: WebServer | null;
  /** The savepoint a stop (`weir stop` or `POST /jobs/:id/stop`) ended the job with, once it completed. */
  readonly stoppedWithSavepoint: string | null;
  /** Closes the endpoint after its requests in progress were answered, and unregisters the job. */
  close(): Promise<void>;
}

export async function openRunControl(
  client: JobClient,
  job: { path: string; name: string; ha?: RegisteredHa },
  log: (line: string) => void,
  master: JobMaster | null = null,
  /** The dashboard's port, bound before the job started (`--web-port`); null: an ephemeral one. */
  listener: WebListener | null = null,
): Promise<RunControl> {
  let server: ControlServer;
  let dashboard: WebServer | null = null;
  const token = newControlToken();
  try {
    // The token reaches `weir` commands only through the registry: no safe registry, no endpoint.
    ensureRegistryDir();
    server = await startControlServer(client, token, () => dashboard?.advice() ?? null);
  } catch (err) {
    log(`weir: warning: no control endpoint for job ${client.jobId}: ${oneLine(errorMessage(err))}`);
    await listener?.close();
    return { server: null, dashboard: null, stoppedWithSavepoint: null, close: async () => {} };
  }
  const onExit = () => unregisterJob(client.jobId);
  try {
    registerJob({
      jobId: client.jobId,
      name: job.name,
      address: server.address,
      token,
      pid: process.pid,
      module: job.path,
      startedAt: isoTime(systemClock.wallNow()),
      ...(job.ha === undefined ? {} : { ha: job.ha }),
    });
    process.on('exit', onExit);
  } catch (err) {
    await server.close();
    log(`weir: warning: no control endpoint for job ${client.jobId}: it could not be registered: ${oneLine(errorMessage(err))}`);
    await listener?.close();
    return { server: null, dashboard: null, stoppedWithSavepoint: null, close: async () => {} };
  }
  log(`control: ${server.address} (job ${client.jobId})`);
  let stoppedByRest: string | null = null;
  dashboard = await openDashboard(client, master, token, log, (location) => (stoppedByRest = location), listener);
  let closing: Promise<void> | null = null;
  return {
    server,
    dashboard,
    get stoppedWithSavepoint() {
      return server.stoppedWithSavepoint ?? stoppedByRest;
    },
    close: () =>
      (closing ??= (async () => {
        unregisterJob(client.jobId);
        process.off('exit', onExit);
        await Promise.all([server.close(), dashboard?.close()]);
      })()),
  };
}
