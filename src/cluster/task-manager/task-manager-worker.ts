/**
 * A worker thread's entry: answers the job master's heartbeats at once (startup-control.ts), then
 * loads the rest of Weir and the job module and runs a TaskManager (task-manager-worker-job.ts).
 * Only the transport and the protocol are imported before the first answer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerHeartbeatsUntilReady } from './startup-control.ts';
import { portLink } from '../../runtime/network/link.ts';
import type { ToJobMaster, ToTaskManager } from '../transport/protocol.ts';
import type { TaskManagerWorkerData } from '../launchers/worker-task-managers.ts';

const control = answerHeartbeatsUntilReady(portLink<ToJobMaster, ToTaskManager>(parentPort!));
const { runWorkerTaskManager } = await import('./task-manager-worker-job.ts');
await runWorkerTaskManager(workerData as TaskManagerWorkerData, control);
