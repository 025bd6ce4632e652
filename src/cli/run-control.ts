/**
 * The control side of one `weir run`: starts the job's control endpoint, registers it under the job
 * id, and undoes both when the run ends — also when the process exits early (a second Ctrl-C).
 */
import { systemClock } from '../core/adapters.ts';
import { errorMessage } from '../core/errors.ts';
import type { JobClient } from '../index.ts';
import { startControlServer, type ControlServer } from './control-server.ts';
import { isoTime, oneLine } from './format.ts';
import { registerJob, unregisterJob } from './job-registry.ts';

export interface RunControl {
  /** The endpoint, or null when it could not start (the job runs on without it). */
  readonly server: ControlServer | null;
  /** Closes the endpoint after its requests in progress were answered, and unregisters the job. */
  close(): Promise<void>;
}

export async function openRunControl(client: JobClient, job: { path: string; name: string }, log: (line: string) => void): Promise<RunControl> {
  let server: ControlServer;
  try {
    server = await startControlServer(client);
  } catch (err) {
    log(`weir: warning: no control endpoint for job ${client.jobId}: ${oneLine(errorMessage(err))}`);
    return { server: null, close: async () => {} };
  }
  const onExit = () => unregisterJob(client.jobId);
  try {
    registerJob({ jobId: client.jobId, name: job.name, address: server.address, pid: process.pid, module: job.path, startedAt: isoTime(systemClock.wallNow()) });
    process.on('exit', onExit);
  } catch (err) {
    log(`weir: warning: job ${client.jobId} is not registered (use its address instead of its id): ${oneLine(errorMessage(err))}`);
  }
  log(`control: ${server.address} (job ${client.jobId})`);
  let closing: Promise<void> | null = null;
  return {
    server,
    close: () =>
      (closing ??= (async () => {
        unregisterJob(client.jobId);
        process.off('exit', onExit);
        await server.close();
      })()),
  };
}
