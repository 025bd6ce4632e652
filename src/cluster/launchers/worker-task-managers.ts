/**
 * Task managers on worker threads: one Worker per task manager, its control link on the worker's
 * own port, and a MessageChannel between every two of them for the data plane (frames go from
 * worker to worker, never through the job master's thread). Each worker loads the job module
 * itself (task-manager-worker.ts). Run from the sources (tests, benchmarks under tsx) the worker
 * registers tsx first: Node 20 does not hand a parent's --import hooks to a worker.
 */
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { portLink } from '../../runtime/network/link.ts';
import type { ToJobMaster, ToTaskManager } from '../transport/protocol.ts';
import type { LaunchTaskManagers, TaskManagerPool } from '../job-master/remote-deployment.ts';
import type { TaskManagerJobData } from '../task-manager/task-manager-context.ts';

/** What every worker needs to build the job: the module, the options it ran with, and the settings. */
export interface WorkerJob extends TaskManagerJobData {
  /**
   * URL of the module the worker imports once it answers heartbeats: the job's side, exporting
   * `runWorkerTaskManager(data, control)` (`api/task-manager-worker-job.ts`, which runs the job
   * module against a StreamEnvironment; cluster code does not reach up to it).
   */
  readonly entry: string;
  readonly modulePath: string;
}

/** What a worker receives as workerData. */
export interface TaskManagerWorkerData {
  readonly index: number;
  readonly job: WorkerJob;
  /** Data ports to the other task managers, by their index. */
  readonly peers: ReadonlyArray<readonly [number, MessagePort]>;
}

/** `slotsPerTaskManager`: what each offers (null: as many as the placement gives it). */
export function launchWorkerTaskManagers(count: number, job: WorkerJob, slotsPerTaskManager: number | null = null): LaunchTaskManagers {
  return async (): Promise<TaskManagerPool> => {
    const peers: Array<Array<readonly [number, MessagePort]>> = Array.from({ length: count }, () => []);
    for (let i = 0; i < count; i++) {
      for (let j = i + 1; j < count; j++) {
        const { port1, port2 } = new MessageChannel();
        peers[i]!.push([j, port1]);
        peers[j]!.push([i, port2]);
      }
    }
    const workers = peers.map((p, index) => spawnWorker({ index, job, peers: p }));
    let stopping = false;
    const early: Array<[number, Error]> = [];
    let handler: ((index: number, error: Error) => void) | null = null;
    const failed = (index: number, error: Error) => {
      if (stopping) return;
      if (handler) handler(index, error);
      else early.push([index, error]);
    };
    workers.forEach((w, index) => {
      w.on('error', (err) => failed(index, err instanceof Error ? err : new Error(String(err))));
      w.on('exit', (code) => failed(index, new Error(`its worker thread exited with code ${code}`)));
    });
    const host = hostname();
    return {
      links: workers.map((w) => portLink<ToTaskManager, ToJobMaster>(w)),
      taskManagers: workers.map(() => ({ host, pid: process.pid, slots: slotsPerTaskManager, transport: 'worker-thread', dataAddress: null })),
      onFailure: (h) => {
        handler = h;
        for (const [i, e] of early.splice(0)) h(i, e);
      },
      shutdown: () => {
        if (stopping) return;
        stopping = true;
        for (const w of workers) void w.terminate();
      },
    };
  };
}

function spawnWorker(data: TaskManagerWorkerData): Worker {
  const own = import.meta.url;
  const transferList = data.peers.map(([, port]) => port);
  if (!own.endsWith('.ts')) return new Worker(new URL('../task-manager/task-manager-worker.js', own), { workerData: data, transferList });
  const entry = new URL('../task-manager/task-manager-worker.ts', own).href;
  const tsx = pathToFileURL(tsxEsmApi(createRequire(own))).href;
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData: data, transferList, execArgv: ['--conditions=weir-source'] });
}

/** tsx's ESM register API (its `import` export; require.resolve would give the CommonJS one). */
function tsxEsmApi(require: NodeJS.Require): string {
  const manifest = require.resolve('tsx/package.json');
  const pkg = require(manifest) as { exports: Record<string, { import: { default: string } }> };
  return path.join(path.dirname(manifest), pkg.exports['./esm/api']!.import.default);
}
