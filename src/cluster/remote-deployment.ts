/**
 * The job master's side of task managers: launches a pool of them for an attempt, places the
 * subtasks, sends each its deploy message and waits until all deployed, then turns the calls of
 * the job master into control messages and the task managers' messages into calls on the task
 * gateway. A task manager that dies fails the attempt through the gateway, so the restart
 * strategy decides what follows exactly as for a failing subtask in this thread.
 */
import { errorMessage } from '../core/errors.ts';
import type { CheckpointBarrier } from '../checkpoint/barrier/barrier.ts';
import type { CheckpointMetadata } from '../checkpoint/metadata/metadata.ts';
import type { CheckpointId, TaskId } from '../core/ids.ts';
import type { Environment } from '../core/time.ts';
import { buildExecutionPlan, type ExecutionPlan } from '../graph/execution-plan.ts';
import type { TaskStatus } from '../runtime/stream-task.ts';
import type { AttemptDeployment, Deployer, TaskHandle } from './attempt-deployment.ts';
import type { DeploymentSpec } from './deployment.ts';
import { fingerprintOf } from './graph-fingerprint.ts';
import type { Link } from './transport/link.ts';
import { fromWireError, type Placement, type ToJobMaster, type ToTaskManager } from './transport/protocol.ts';

/** The task managers of one attempt. */
export interface TaskManagerPool {
  readonly links: ReadonlyArray<Link<ToTaskManager, ToJobMaster>>;
  /** Called when a task manager dies (throws, exits) before shutdown. */
  onFailure(handler: (index: number, error: Error) => void): void;
  /** Ends every task manager (terminates worker threads); idempotent. */
  shutdown(): void;
}

export type LaunchTaskManagers = () => Promise<TaskManagerPool>;

const HEARTBEAT_MS = 500;

const taskKey = (t: TaskId): string => `${t.vertex}/${t.subtask}`;

/** A subtask in a task manager, as the job master sees it: calls become messages. */
class RemoteTask implements TaskHandle {
  status: TaskStatus = 'CREATED';
  sourceRecordsOut = 0;
  sinkRecordsIn = 0;
  recordsIn = 0;
  recordsWritten = 0;
  backpressuredMs = 0;

  constructor(
    readonly id: TaskId,
    readonly name: string,
    readonly isSourceTask: boolean,
    private readonly link: Link<ToTaskManager, ToJobMaster>,
  ) {}

  triggerCheckpoint(barrier: CheckpointBarrier): void {
    this.link.send({ type: 'trigger', task: this.id, barrier });
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.link.send({ type: 'notify-complete', task: this.id, checkpointId });
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.link.send({ type: 'notify-aborted', task: this.id, checkpointId });
  }
}

export function remoteDeployer(launch: LaunchTaskManagers, place: (plan: ExecutionPlan) => Placement, env: Environment): Deployer {
  return async (spec, restore, firstCheckpointFull) => {
    const pool = await launch();
    const placement = place(buildExecutionPlan(spec.graph));
    const attempt = new RemoteAttempt(pool, spec, env);
    try {
      await attempt.deploy(placement, restore, firstCheckpointFull);
    } catch (err) {
      attempt.teardown();
      throw err;
    }
    return attempt;
  };
}

class RemoteAttempt implements AttemptDeployment {
  tasks: RemoteTask[] = [];
  private readonly byKey = new Map<string, RemoteTask>();
  private readonly tasksOf: RemoteTask[][];
  private ended = false;
  private heartbeat = 0;

  constructor(
    private readonly pool: TaskManagerPool,
    private readonly spec: DeploymentSpec,
    private readonly env: Environment,
  ) {
    this.tasksOf = pool.links.map(() => []);
  }

  deploy(placement: Placement, restore: CheckpointMetadata | null, firstCheckpointFull: boolean): Promise<void> {
    const { spec, pool } = this;
    return new Promise<void>((resolve, reject) => {
      let waiting = pool.links.length;
      pool.onFailure((index, error) => {
        if (waiting > 0) {
          waiting = -1;
          reject(new Error(`task manager ${index}: ${errorMessage(error)}`, { cause: error }));
        } else this.taskManagerDied(index, error);
      });
      pool.links.forEach((link, index) => {
        link.onMessage((m) => {
          if (m.type === 'deploy-failed' && waiting > 0) {
            waiting = -1;
            reject(fromWireError(m.error));
          } else if (m.type === 'deployed' && waiting > 0) {
            for (const t of m.tasks) this.tasksOf[index]!.push(new RemoteTask(t.task, t.name, t.isSource, link));
            if (--waiting === 0) {
              this.collectTasks();
              resolve();
            }
          } else this.onMessage(m);
        });
        link.send({
          type: 'deploy',
          attempt: spec.attempt,
          runId: spec.runId,
          fingerprint: fingerprintOf(spec.graph),
          placement,
          restore,
          firstCheckpointFull,
        });
      });
    });
  }

  private collectTasks(): void {
    this.tasks = this.tasksOf.flat().sort((a, b) => a.id.vertex - b.id.vertex || a.id.subtask - b.id.subtask);
    for (const t of this.tasks) this.byKey.set(taskKey(t.id), t);
  }

  private onMessage(m: ToJobMaster): void {
    if (this.ended) return;
    const gateway = this.spec.gateway;
    switch (m.type) {
      case 'ack':
        gateway.acknowledgeCheckpoint(m.ack);
        return;
      case 'decline':
        gateway.declineCheckpoint(m.task, m.checkpointId, m.reason, m.cause === null ? undefined : fromWireError(m.cause));
        return;
      case 'end-of-data':
        gateway.reachedEndOfData(m.task);
        return;
      case 'task-finished':
        this.setStatus(m.task, 'FINISHED');
        gateway.taskFinished(m.task);
        return;
      case 'task-failed':
        this.setStatus(m.task, 'FAILED');
        gateway.taskFailed(m.task, fromWireError(m.error));
        return;
      case 'metrics':
        for (const f of m.tasks) {
          const t = this.byKey.get(taskKey(f.task));
          if (t) {
            t.sourceRecordsOut = f.sourceRecordsOut;
            t.sinkRecordsIn = f.sinkRecordsIn;
            t.recordsIn = f.recordsIn;
            t.recordsWritten = f.recordsWritten;
            t.backpressuredMs = f.backpressuredMs;
          }
        }
        return;
      case 'heartbeat':
      case 'deployed':
      case 'deploy-failed':
        return;
    }
  }

  private setStatus(task: TaskId, status: TaskStatus): void {
    const t = this.byKey.get(taskKey(task));
    if (t) t.status = status;
  }

  private taskManagerDied(index: number, error: Error): void {
    if (this.ended) return;
    const first = this.tasksOf[index]![0] ?? this.tasks[0];
    if (first) this.spec.gateway.taskFailed(first.id, new Error(`task manager ${index} died: ${errorMessage(error)}`, { cause: error }));
  }

  async open(): Promise<void> {
    // Each task manager opened its subtasks before it reported them deployed.
  }

  start(): void {
    for (const link of this.pool.links) link.send({ type: 'start' });
    for (const t of this.tasks) t.status = 'RUNNING';
    this.scheduleHeartbeat();
  }

  private scheduleHeartbeat(): void {
    this.env.scheduler.schedule(HEARTBEAT_MS, () => {
      if (this.ended) return;
      const seq = ++this.heartbeat;
      for (const link of this.pool.links) link.send({ type: 'heartbeat', seq });
      this.scheduleHeartbeat();
    });
  }

  teardown(): void {
    if (this.ended) return;
    this.ended = true;
    for (const link of this.pool.links) link.send({ type: 'cancel' });
    for (const t of this.tasks) if (t.status === 'RUNNING' || t.status === 'CREATED') t.status = 'CANCELED';
    this.pool.shutdown();
  }
}
