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
import { taskKey } from '../core/ids.ts';
import type { Environment } from '../core/time.ts';
import { buildExecutionPlan, type ExecutionPlan } from '../graph/execution-plan.ts';
import type { TaskStatus } from '../runtime/stream-task.ts';
import type { AttemptDeployment, Deployer, TaskHandle } from './attempt-deployment.ts';
import type { DeploymentSpec } from './deployment.ts';
import { fingerprintOf } from './graph-fingerprint.ts';
import { HeartbeatMonitor, type HeartbeatSettings } from './heartbeat-monitor.ts';
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

/** How the job master watches its task managers. */
export interface TaskManagerWatch {
  readonly heartbeat: HeartbeatSettings;
  /**
   * Milliseconds a task manager has to answer `cancel` (every subtask stopped) before it is
   * terminated: a subtask stuck in user code never lets it answer (Flink's task cancellation watchdog).
   */
  readonly cancellationTimeoutMs: number;
}

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

/**
 * Deploys each attempt on task managers. Warm task managers: when an attempt ends with every task
 * manager alive and answering (a subtask failed, not a task manager), they are kept for the next
 * attempt instead of being terminated and started again (a worker thread loads Weir and the job
 * module: seconds); one that died or was terminated by the watchdog makes the next attempt start
 * fresh ones. `dispose` ends the kept ones once the job ended.
 */
export function remoteDeployer(launch: LaunchTaskManagers, place: (plan: ExecutionPlan) => Placement, env: Environment, watch: TaskManagerWatch): Deployer {
  let kept: TaskManagerPool | null = null;
  let disposed = false;
  const keep = (pool: TaskManagerPool): void => {
    if (disposed || kept !== null) {
      pool.shutdown();
      return;
    }
    kept = pool;
    // One that dies while kept is no use to the next attempt.
    pool.onFailure(() => {
      if (kept === pool) kept = null;
      pool.shutdown();
    });
  };
  const deployer: Deployer = async (spec, restore, firstCheckpointFull) => {
    const warm = kept;
    kept = null;
    const pool = warm ?? (await launch());
    const placement = place(buildExecutionPlan(spec.graph));
    const attempt = new RemoteAttempt(pool, spec, env, watch, warm !== null, keep);
    try {
      await attempt.deploy(placement, restore, firstCheckpointFull);
    } catch (err) {
      await attempt.teardown();
      throw err;
    }
    return attempt;
  };
  deployer.dispose = () => {
    disposed = true;
    kept?.shutdown();
    kept = null;
  };
  return deployer;
}

class RemoteAttempt implements AttemptDeployment {
  tasks: RemoteTask[] = [];
  private readonly byKey = new Map<string, RemoteTask>();
  private readonly tasksOf: RemoteTask[][];
  private ended = false;
  private stopped: Promise<void> | null = null;
  /** During teardown: a task manager answered `cancel` or died. */
  private stoppedOne: (index: number) => void = () => {};
  /** Task managers found dead (worker gone, or silent): teardown does not wait for their answer. */
  private readonly dead = new Set<number>();
  private readonly heartbeats: HeartbeatMonitor;
  /** While `open` waits for the task managers' answers. */
  private opening: { answer(m: Extract<ToJobMaster, { type: 'opened' | 'open-failed' }>): void; fail(error: Error): void } | null = null;
  private started = false;
  /** A task manager that died after deploying and before the attempt opened or started: reported by open, or at start. */
  private diedBeforeStart: [number, Error] | null = null;

  constructor(
    private readonly pool: TaskManagerPool,
    private readonly spec: DeploymentSpec,
    private readonly env: Environment,
    private readonly watch: TaskManagerWatch,
    /** The task managers ran the previous attempt: they said hello long ago. */
    private readonly warm: boolean,
    /** Takes the task managers after a clean teardown, for the next attempt. */
    private readonly keep: (pool: TaskManagerPool) => void,
  ) {
    this.tasksOf = pool.links.map(() => []);
    this.heartbeats = new HeartbeatMonitor(
      pool.links.length,
      watch.heartbeat,
      env,
      (index, seq) => pool.links[index]!.send({ type: 'heartbeat', seq }),
      (index, silentMs) =>
        this.failTaskManager(index, new Error(`no heartbeat answered for ${Math.round(silentMs)} ms (heartbeat.timeoutMs ${watch.heartbeat.timeoutMs})`)),
    );
  }

  /** A task manager died (its worker failed or exited, or it stopped answering heartbeats). */
  private failTaskManager: (index: number, error: Error) => void = () => {};

  /**
   * Deploys every task manager's share. Heartbeats start here, not with the attempt: a task manager
   * that stops answering while it loads the job module, restores state or opens its operators is
   * declared dead after heartbeat.timeoutMs and the deploy fails, so the restart strategy decides.
   * Each is watched from its hello on, so the time a worker thread takes to start is not silence.
   */
  deploy(placement: Placement, restore: CheckpointMetadata | null, firstCheckpointFull: boolean): Promise<void> {
    const { spec, pool } = this;
    return new Promise<void>((resolve, reject) => {
      let waiting = pool.links.length;
      this.failTaskManager = (index, error) => {
        this.dead.add(index);
        if (this.ended) this.stoppedOne(index);
        else if (waiting > 0) {
          waiting = -1;
          reject(new Error(`task manager ${index} died while deploying: ${errorMessage(error)}`, { cause: error }));
        } else if (this.opening !== null)
          this.opening.fail(new Error(`task manager ${index} died while opening its subtasks: ${errorMessage(error)}`, { cause: error }));
        else this.taskManagerDied(index, error);
      };
      pool.onFailure((index, error) => this.failTaskManager(index, error));
      pool.links.forEach((link, index) => {
        link.onMessage((m) => {
          if (m.type === 'heartbeat') this.heartbeats.heard(index);
          if (m.type === 'canceled') this.stoppedOne(index);
          else if (m.type === 'opened' || m.type === 'open-failed') this.opening?.answer(m);
          else if (m.type === 'deploy-failed' && waiting > 0 && m.attempt === spec.attempt) {
            waiting = -1;
            reject(fromWireError(m.error));
          } else if (m.type === 'deployed' && waiting > 0 && m.attempt === spec.attempt) {
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
      if (this.warm) for (const index of pool.links.keys()) this.heartbeats.heard(index);
      this.heartbeats.start();
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
      case 'opened':
      case 'open-failed':
      case 'canceled':
        return;
    }
  }

  private setStatus(task: TaskId, status: TaskStatus): void {
    const t = this.byKey.get(taskKey(task));
    if (t) t.status = status;
  }

  private taskManagerDied(index: number, error: Error): void {
    if (this.ended) return;
    if (!this.started) {
      // Deployed, not started (the job master reconciles the sinks meanwhile): nobody would hear it yet.
      this.diedBeforeStart ??= [index, error];
      return;
    }
    const first = this.tasksOf[index]![0] ?? this.tasks[0];
    if (first) this.spec.gateway.taskFailed(first.id, new Error(`task manager ${index} died: ${errorMessage(error)}`, { cause: error }));
  }

  /**
   * Asks every task manager to open its subtasks and waits for all of them: the job master calls
   * this after it reconciled the sinks, so a sink re-commits what it recovered only after a
   * roll-back of newer commits (the order the in-thread deployment has).
   */
  open(): Promise<void> {
    const links = this.pool.links;
    const died = this.diedBeforeStart;
    if (died !== null) {
      // It died while the job master reconciled the sinks: it cannot answer `open`.
      this.diedBeforeStart = null;
      return Promise.reject(new Error(`task manager ${died[0]} died before its subtasks opened: ${errorMessage(died[1])}`, { cause: died[1] }));
    }
    return new Promise<void>((resolve, reject) => {
      let waiting = links.length;
      const settle = (): void => {
        this.opening = null;
      };
      this.opening = {
        answer: (m) => {
          if (m.attempt !== this.spec.attempt) return;
          if (m.type === 'open-failed') {
            settle();
            reject(fromWireError(m.error));
          } else if (--waiting === 0) {
            settle();
            resolve();
          }
        },
        fail: (error) => {
          settle();
          reject(error);
        },
      };
      for (const link of links) link.send({ type: 'open', attempt: this.spec.attempt });
    });
  }

  start(): void {
    for (const link of this.pool.links) link.send({ type: 'start' });
    for (const t of this.tasks) t.status = 'RUNNING';
    this.started = true;
    if (this.diedBeforeStart !== null) this.taskManagerDied(...this.diedBeforeStart);
  }

  /** The process died: its task managers go with it, at once, without a word (no cancel, no watchdog). */
  abandon(): void {
    this.ended = true;
    this.opening?.fail(new Error('the attempt was abandoned while its subtasks opened'));
    this.heartbeats.stop();
    for (const t of this.tasks) if (t.status === 'RUNNING' || t.status === 'CREATED') t.status = 'CANCELED';
    this.pool.shutdown();
  }

  /**
   * Asks every task manager to cancel its subtasks; each answers once they stopped. One that has
   * not answered within the cancellation timeout (a subtask stuck in user code holds its thread)
   * is terminated with the rest when the pool shuts down. One already found dead is not waited
   * for: it is terminated at once with the rest, so a failover does not wait for the timeout.
   */
  teardown(): Promise<void> {
    if (this.stopped) return this.stopped;
    this.ended = true;
    this.opening?.fail(new Error('the attempt was torn down while its subtasks opened'));
    this.heartbeats.stop();
    for (const t of this.tasks) if (t.status === 'RUNNING' || t.status === 'CREATED') t.status = 'CANCELED';
    const { pool, env, watch } = this;
    this.stopped = new Promise<void>((resolve) => {
      const pending = new Set([...pool.links.keys()].filter((index) => !this.dead.has(index)));
      const done = (): void => {
        watchdog.cancel();
        this.stoppedOne = () => {};
        // Every task manager alive and its subtasks stopped: warm for the next attempt.
        if (pending.size === 0 && this.dead.size === 0) this.keep(pool);
        else pool.shutdown();
        resolve();
      };
      const watchdog = env.scheduler.schedule(watch.cancellationTimeoutMs, () => {
        const stuck = [...pending].join(', ');
        this.spec.log?.(
          `task manager${pending.size > 1 ? 's' : ''} ${stuck} did not stop ${pending.size > 1 ? 'their' : 'its'} subtasks within cancellationTimeoutMs (${watch.cancellationTimeoutMs} ms): terminated`,
        );
        done();
      });
      this.stoppedOne = (index) => {
        if (pending.delete(index) && pending.size === 0) done();
      };
      for (const link of pool.links) link.send({ type: 'cancel' });
      if (pending.size === 0) done();
    });
    return this.stopped;
  }
}
