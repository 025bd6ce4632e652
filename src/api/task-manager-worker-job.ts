/**
 * What a worker thread runs once it answers heartbeats: loads the job module, builds the job graph
 * from it with the options the job master ran with, and runs a TaskManager on the worker's control
 * link. If the job cannot be built here, every deploy is answered with a JobFailedError saying why
 * (not retried: it would fail again).
 */
import { StreamEnvironment } from './environment.ts';
import type { StreamEnvironmentOptions } from './options.ts';
import { loadJobModule } from './load-job-module.ts';
import { realEnvironment, systemClock } from '../core/adapters.ts';
import { preciseWallNow } from '../core/wall-time.ts';
import { errorMessage, JobFailedError } from '../core/errors.ts';
import { jobId } from '../core/ids.ts';
import { NO_FAULTS } from '../runtime/faults.ts';
import { TaskManager, type TaskManagerContext } from '../cluster/task-manager/task-manager.ts';
import { taskManagerContext, type TaskManagerJobData } from '../cluster/task-manager/task-manager-context.ts';
import { portLink, type Link } from '../runtime/network/link.ts';
import { toWireError, type DataMessage, type ToJobMaster, type ToTaskManager } from '../cluster/transport/protocol.ts';
import type { TaskManagerWorkerData } from '../cluster/launchers/worker-task-managers.ts';

/** What a task manager builds a job from, wherever it runs (a worker thread, another process): the job's data and its module file here. */
export interface TaskManagerModuleJob extends TaskManagerJobData {
  readonly modulePath: string;
}

/**
 * Loads the job module and builds the job graph, backends and storage client once; the result gives
 * the context of the task manager at each index (a process serves pool after pool with one build).
 * @throws JobFailedError when the job cannot be built here (`who` names the task manager).
 */
export async function prepareTaskManagerJob(job: TaskManagerModuleJob, who: string): Promise<(index: number) => TaskManagerContext> {
  try {
    const module = await loadJobModule(job.modulePath);
    const env = StreamEnvironment.create(job.options as StreamEnvironmentOptions);
    await module.build(env);
    const parts = env.taskManagerParts(jobId(job.jobId));
    const run = { env: realEnvironment(), faults: NO_FAULTS, ...job };
    return (index) => taskManagerContext(index, parts, env.options, run);
  } catch (err) {
    throw new JobFailedError(`${who} cannot build the job from ${job.modulePath}: ${errorMessage(err)}`, { cause: err });
  }
}

async function buildContext(data: TaskManagerWorkerData): Promise<TaskManagerContext> {
  const context = await prepareTaskManagerJob(data.job, `task manager ${data.index}`);
  return context(data.index);
}

/** `control` answers heartbeats and holds other messages until this takes it over, so none is lost while the module loads. */
export async function runWorkerTaskManager(data: TaskManagerWorkerData, control: Link<ToJobMaster, ToTaskManager>): Promise<void> {
  let ctx: TaskManagerContext;
  try {
    ctx = await buildContext(data);
  } catch (err) {
    const error = toWireError(err);
    control.onMessage((m) => {
      if (m.type === 'deploy') control.send({ type: 'deploy-failed', epoch: m.epoch, error });
      else if (m.type === 'cancel') control.send({ type: 'canceled', epoch: m.epoch });
      else if (m.type === 'heartbeat') control.send({ type: 'heartbeat', epoch: m.epoch, seq: m.seq, at: preciseWallNow(systemClock) });
    });
    return;
  }
  const peers = new Map(data.peers.map(([index, port]) => [index, portLink<DataMessage, DataMessage>(port)]));
  new TaskManager(ctx, control, peers);
}
