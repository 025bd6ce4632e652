/**
 * A worker thread's entry: answers the job master's heartbeats at once (startup-control.ts), then
 * imports the module its data names (`job.entry`: the job's side, which loads the rest of Weir and
 * the job module and runs a TaskManager; `api/task-manager-worker-job.ts`). Only the transport, the
 * protocol and the system clock (answers carry it) are imported before the first answer, and
 * nothing above `cluster/`: the launcher is told the entry by whoever defines jobs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerHeartbeatsUntilReady } from './startup-control.ts';
import { systemClock } from '../../core/adapters.ts';
import { portLink } from '../../runtime/network/link.ts';
import type { ToJobMaster, ToTaskManager } from '../transport/protocol.ts';
import type { Link } from '../../runtime/network/link.ts';
import type { TaskManagerWorkerData } from '../launchers/worker-task-managers.ts';

/** What the job side exports. */
interface JobSide {
  runWorkerTaskManager(data: TaskManagerWorkerData, control: Link<ToJobMaster, ToTaskManager>): Promise<void>;
}

const data = workerData as TaskManagerWorkerData;
// The clock the task manager will run on (api/task-manager-worker-job.ts: realEnvironment()).
const control = answerHeartbeatsUntilReady(portLink<ToJobMaster, ToTaskManager>(parentPort!), systemClock);
const { runWorkerTaskManager } = (await import(data.job.entry)) as JobSide;
await runWorkerTaskManager(data, control);
