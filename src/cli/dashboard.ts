/**
 * The dashboard side of `weir run` and `weir demo`: starts the job's web server (REST API,
 * metrics, dashboard) and prints its address; a failure to start is a warning, the job runs on.
 */
import { errorMessage } from '../core/errors.ts';
import type { JobClient } from '../index.ts';
import type { JobMaster } from '../internal.ts';
import { startWebServer, type WebListener, type WebServer } from '../web/server.ts';
import { oneLine } from './format.ts';

export async function openDashboard(
  client: JobClient,
  master: JobMaster | null,
  token: string,
  log: (line: string) => void,
  onStopped?: (location: string) => void,
  listener: WebListener | null = null,
): Promise<WebServer | null> {
  if (master === null) {
    await listener?.close();
    return null;
  }
  try {
    const server = await startWebServer({ client, master, token, ...(onStopped ? { onStopped } : {}), ...(listener ? { listener } : {}) });
    log(`dashboard: ${server.address}/ (job ${client.jobId}; REST API under ${server.address}/jobs, metrics at ${server.address}/metrics)`);
    return server;
  } catch (err) {
    log(`weir: warning: no dashboard for job ${client.jobId}: ${oneLine(errorMessage(err))}`);
    await listener?.close();
    return null;
  }
}
