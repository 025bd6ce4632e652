/**
 * One attempt on task managers, as the job master sees it: turns the job master's calls into
 * control messages of the attempt's epoch and the task managers' messages into calls on the task
 * gateway. Its life is one phase value (remote-attempt-phase.ts) that holds what the phase needs:
 * the answers still awaited while it deploys or opens, a task manager that died before it started,
 * the task managers still stopping while it ends. A message of another epoch is dropped and counted.
 */
import { type ChangelogFigures, onReceiverClock } from '../../state/changelog/figures.ts';
import { assert } from '../../core/assert.ts';
import { errorMessage } from '../../core/errors.ts';
import type { CheckpointBarrier } from '../../checkpoint/barrier/barrier.ts';
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import type { CheckpointId, TaskId } from '../../core/ids.ts';
import { taskKey } from '../../core/ids.ts';
import type { Cancellable, Environment } from '../../core/time.ts';
import type { TaskStatus } from '../../runtime/stream-task.ts';
import type { AttemptDeployment, TaskHandle } from './attempt-deployment.ts';
import type { DeploymentSpec } from '../task-manager/deployment.ts';
import { sameEpoch, type Epoch } from '../transport/epoch.ts';
import { fingerprintOf } from './graph-fingerprint.ts';
import { HeartbeatMonitor } from './heartbeat-monitor.ts';
import { nextRemoteAttemptPhase, type RemoteAttemptEvent, type RemoteAttemptPhase } from './remote-attempt-phase.ts';
import type { TaskManagerPool, TaskManagerWatch } from './remote-deployment.ts';
import type { TaskManagerRoster } from './task-manager-roster.ts';
import { ackOnJobMasterClock } from './clock-offsets.ts';
import type { Link } from '../../runtime/network/link.ts';
import { fromWireError, type Placement, type ToJobMaster, type ToTaskManager } from '../transport/protocol.ts';

/** A subtask in a task manager, as the job master sees it: calls become messages of its attempt's epoch. */
class RemoteTask implements TaskHandle {
  status: TaskStatus = 'CREATED';
  sourceRecordsOut = 0;
  sinkRecordsIn = 0;
  recordsIn = 0;
  recordsWritten = 0;
  backpressuredMs = 0;
  changelog: ChangelogFigures | null = null;

  constructor(
    readonly id: TaskId,
    readonly name: string,
    readonly isSourceTask: boolean,
    private readonly link: Link<ToTaskManager, ToJobMaster>,
    private readonly epoch: Epoch,
  ) {}

  triggerCheckpoint(barrier: CheckpointBarrier): void {
    this.link.send({ type: 'trigger', epoch: this.epoch, task: this.id, barrier });
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.link.send({ type: 'notify-complete', epoch: this.epoch, task: this.id, checkpointId });
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.link.send({ type: 'notify-aborted', epoch: this.epoch, task: this.id, checkpointId });
  }
}

/** A task manager found dead, and why. */
type Death = readonly [index: number, error: Error];

/** Answers awaited from every task manager, and the promise they settle. */
interface Awaiting {
  waiting: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** The phase with what it holds. */
type Phase =
  | ({ readonly name: 'deploying' } & Awaiting)
  /** `diedBeforeStart`: a task manager died meanwhile; `open` reports it, or `start`. */
  | { readonly name: 'deployed'; diedBeforeStart: Death | null }
  | ({ readonly name: 'opening' } & Awaiting)
  | { readonly name: 'opened'; diedBeforeStart: Death | null }
  | { readonly name: 'running' }
  | { readonly name: 'failed' }
  /** `pending`: task managers that have not answered `cancel` yet; `done` ends the teardown. */
  | { readonly name: 'ending'; readonly stopped: Promise<void>; readonly pending: Set<number>; readonly done: () => void }
  | { readonly name: 'ended'; readonly stopped: Promise<void> }
  /** `stopped`: the teardown begun before the process died, if one was. */
  | { readonly name: 'abandoned'; readonly stopped: Promise<void> | null };

export class RemoteAttempt implements AttemptDeployment {
  tasks: RemoteTask[] = [];
  private readonly byKey = new Map<string, RemoteTask>();
  private readonly tasksOf: RemoteTask[][];
  private phase: Phase;
  /** Task managers found dead (worker gone, or silent): teardown does not wait for their answer. */
  private readonly dead = new Set<number>();
  private readonly heartbeats: HeartbeatMonitor;
  /** Settled by the task managers' answers to the deploy. */
  private readonly deployed: Promise<void>;

  /**
   * Sends every task manager its share of the deploy. Heartbeats start here, not with the attempt:
   * a task manager that stops answering while it loads the job module, restores state or opens its
   * operators is declared dead after heartbeat.timeoutMs and the deploy fails, so the restart
   * strategy decides. Each is watched from its hello on, so the time a worker thread takes to
   * start is not silence.
   */
  constructor(
    private readonly pool: TaskManagerPool,
    /** What the job master shows of the pool's task managers: this attempt tells it what it hears. */
    private readonly roster: TaskManagerRoster,
    private readonly spec: DeploymentSpec,
    private readonly env: Environment,
    private readonly watch: TaskManagerWatch,
    /** The task managers ran the previous attempt: they said hello long ago. */
    warm: boolean,
    /** Takes the task managers after a clean teardown, for the next attempt. */
    private readonly keep: (pool: TaskManagerPool) => void,
    placement: Placement,
    restore: CheckpointMetadata | null,
    firstCheckpointFull: boolean,
  ) {
    this.tasksOf = pool.links.map(() => []);
    this.heartbeats = new HeartbeatMonitor(
      pool.links.length,
      watch.heartbeat,
      env,
      (index, seq) => {
        roster.heartbeatSent(index, seq);
        pool.links[index]!.send({ type: 'heartbeat', epoch: spec.epoch, seq });
      },
      (index, silentMs, everHeard) =>
        this.taskManagerFailed(
          index,
          new Error(
            everHeard
              ? `no heartbeat answered for ${Math.round(silentMs)} ms (heartbeat.timeoutMs ${watch.heartbeat.timeoutMs})`
              : `no hello within ${Math.round(silentMs)} ms of the deploy (heartbeat.startTimeoutMs ${watch.heartbeat.startTimeoutMs})`,
          ),
        ),
    );
    let phase!: Phase;
    this.deployed = new Promise<void>((resolve, reject) => (phase = { name: 'deploying', waiting: pool.links.length, resolve, reject }));
    this.phase = phase;
    pool.onFailure((index, error) => this.taskManagerFailed(index, error));
    pool.links.forEach((link, index) => {
      link.onMessage((m) => this.receive(index, link, m));
      link.send({ type: 'deploy', epoch: spec.epoch, runId: spec.runId, fingerprint: fingerprintOf(spec.graph), placement, restore, firstCheckpointFull });
    });
    if (warm) for (const index of pool.links.keys()) this.heartbeats.heard(index);
    this.heartbeats.start();
  }

  /** Resolves once every task manager deployed its share; rejects when one fails or dies first. */
  deploy(): Promise<void> {
    return this.deployed;
  }

  private enter(event: RemoteAttemptEvent, next: Phase): void {
    const name: RemoteAttemptPhase = nextRemoteAttemptPhase(this.phase.name, event);
    assert(name === next.name, () => `remote attempt: '${event}' in phase '${this.phase.name}' leads to '${name}', not '${next.name}'`);
    this.phase = next;
  }

  private receive(index: number, link: Link<ToTaskManager, ToJobMaster>, m: ToJobMaster): void {
    if (m.type === 'hello') {
      this.heartbeats.heard(index);
      this.roster.heard(index);
      return;
    }
    if (!sameEpoch(m.epoch, this.spec.epoch)) {
      // A late message of another attempt (or job master) on a task manager this attempt reuses.
      this.spec.onStaleControl?.();
      return;
    }
    const phase = this.phase;
    switch (m.type) {
      case 'heartbeat':
        this.heartbeats.heard(index);
        this.roster.answered(index, m.seq, m.at);
        return;
      case 'canceled':
        this.roster.canceled(index);
        this.stoppedOne(index);
        return;
      case 'metrics': {
        this.roster.reported(index, m.data);
        // Its changelog stamps are of the task manager's clock: read on the job master's from here on.
        const receivedClockMs = this.env.clock.now();
        this.onMessage({ ...m, tasks: m.tasks.map((f) => ({ ...f, changelog: onReceiverClock(f.changelog, m.clockMs, receivedClockMs) })) });
        return;
      }
      case 'ack':
        // Its barrier arrivals and sync start are stamps of the task manager's clock: read on the job master's from here on.
        this.onMessage({ ...m, ack: ackOnJobMasterClock(m.ack, this.roster.correctionOf(index)) });
        return;
      case 'opened':
      case 'open-failed':
        if (phase.name === 'opening') this.answerOpen(phase, m);
        return;
      case 'deploy-failed':
        if (phase.name === 'deploying') this.fail(phase, fromWireError(m.error));
        return;
      case 'deployed':
        if (phase.name !== 'deploying') return;
        for (const t of m.tasks) this.tasksOf[index]!.push(new RemoteTask(t.task, t.name, t.isSource, link, this.spec.epoch));
        if (--phase.waiting === 0) {
          this.collectTasks();
          this.enter('deployed', { name: 'deployed', diedBeforeStart: null });
          phase.resolve();
        }
        return;
      default:
        this.onMessage(m);
    }
  }

  /** The deploy or open failed: the job master tears the attempt down next. */
  private fail(phase: Awaiting & { readonly name: 'deploying' | 'opening' }, error: Error): void {
    this.enter('fail', { name: 'failed' });
    phase.reject(error);
  }

  private collectTasks(): void {
    this.tasks = this.tasksOf.flat().sort((a, b) => a.id.vertex - b.id.vertex || a.id.subtask - b.id.subtask);
    for (const t of this.tasks) this.byKey.set(taskKey(t.id), t);
  }

  /** What the subtasks tell the job master, until the attempt is torn down. */
  private onMessage(m: Exclude<ToJobMaster, { type: 'hello' | 'heartbeat' | 'canceled' | 'opened' | 'open-failed' | 'deployed' | 'deploy-failed' }>): void {
    if (this.phase.name === 'ending' || this.phase.name === 'ended' || this.phase.name === 'abandoned') return;
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
            t.changelog = f.changelog;
          }
        }
        return;
    }
  }

  private setStatus(task: TaskId, status: TaskStatus): void {
    const t = this.byKey.get(taskKey(task));
    if (t) t.status = status;
  }

  /** A task manager died (its worker failed or exited, or it stopped answering heartbeats): what that means depends on the phase. */
  private taskManagerFailed(index: number, error: Error): void {
    this.dead.add(index);
    this.roster.died(index);
    const phase = this.phase;
    switch (phase.name) {
      case 'deploying':
        this.fail(phase, new Error(`task manager ${index} died while deploying: ${errorMessage(error)}`, { cause: error }));
        return;
      case 'opening':
        this.fail(phase, new Error(`task manager ${index} died while opening its subtasks: ${errorMessage(error)}`, { cause: error }));
        return;
      case 'deployed':
      case 'opened':
        // Not started (the job master reconciles the sinks meanwhile): nobody would hear it yet.
        phase.diedBeforeStart ??= [index, error];
        return;
      case 'running':
        this.taskManagerDied(index, error);
        return;
      case 'ending':
        this.stoppedOne(index);
        return;
      case 'failed':
      case 'ended':
      case 'abandoned':
        return;
    }
  }

  private taskManagerDied(index: number, error: Error): void {
    const first = this.tasksOf[index]![0] ?? this.tasks[0];
    if (first) this.spec.gateway.taskFailed(first.id, new Error(`task manager ${index} died: ${errorMessage(error)}`, { cause: error }));
  }

  /**
   * Asks every task manager to open its subtasks and waits for all of them: the job master calls
   * this after it reconciled the sinks, so a sink re-commits what it recovered only after a
   * roll-back of newer commits (the order the in-thread deployment has).
   */
  open(): Promise<void> {
    const phase = this.phase;
    assert(phase.name === 'deployed', () => `remote attempt: open in phase '${phase.name}'`);
    const died = phase.diedBeforeStart;
    if (died !== null) {
      // It died while the job master reconciled the sinks: it cannot answer `open`.
      this.enter('fail', { name: 'failed' });
      return Promise.reject(new Error(`task manager ${died[0]} died before its subtasks opened: ${errorMessage(died[1])}`, { cause: died[1] }));
    }
    return new Promise<void>((resolve, reject) => {
      this.enter('open', { name: 'opening', waiting: this.pool.links.length, resolve, reject });
      for (const link of this.pool.links) link.send({ type: 'open', epoch: this.spec.epoch });
    });
  }

  private answerOpen(phase: Awaiting & { readonly name: 'opening' }, m: Extract<ToJobMaster, { type: 'opened' | 'open-failed' }>): void {
    if (m.type === 'open-failed') this.fail(phase, fromWireError(m.error));
    else if (--phase.waiting === 0) {
      this.enter('opened', { name: 'opened', diedBeforeStart: null });
      phase.resolve();
    }
  }

  start(): void {
    const phase = this.phase;
    assert(phase.name === 'opened', () => `remote attempt: start in phase '${phase.name}'`);
    for (const link of this.pool.links) link.send({ type: 'start', epoch: this.spec.epoch });
    for (const t of this.tasks) t.status = 'RUNNING';
    this.enter('start', { name: 'running' });
    if (phase.diedBeforeStart !== null) this.taskManagerDied(...phase.diedBeforeStart);
  }

  /** The process died: its task managers go with it, at once, without a word (no cancel, no watchdog). */
  abandon(): void {
    const phase = this.phase;
    const stopped = phase.name === 'ending' || phase.name === 'ended' || phase.name === 'abandoned' ? phase.stopped : null;
    this.enter('abandon', { name: 'abandoned', stopped });
    if (phase.name === 'opening') phase.reject(new Error('the attempt was abandoned while its subtasks opened'));
    this.heartbeats.stop();
    this.cancelTasks();
    this.roster.shutDown();
    this.pool.shutdown();
  }

  private cancelTasks(): void {
    for (const t of this.tasks) if (t.status === 'RUNNING' || t.status === 'CREATED') t.status = 'CANCELED';
  }

  /**
   * Asks every task manager to cancel its subtasks; each answers once they stopped. One that has
   * not answered within the cancellation timeout (a subtask stuck in user code holds its thread)
   * is terminated with the rest when the pool shuts down. One already found dead is not waited
   * for: it is terminated at once with the rest, so a failover does not wait for the timeout.
   * Idempotent: a teardown begun returns the same promise.
   */
  teardown(): Promise<void> {
    const before = this.phase;
    if (before.name === 'ending' || before.name === 'ended') return before.stopped;
    if (before.name === 'abandoned' && before.stopped !== null) return before.stopped;
    const { pool, env, watch } = this;
    const pending = new Set([...pool.links.keys()].filter((index) => !this.dead.has(index)));
    let watchdog: Cancellable | null = null;
    let resolve!: () => void;
    const stopped = new Promise<void>((r) => (resolve = r));
    const done = (): void => {
      watchdog?.cancel();
      // Every task manager alive and its subtasks stopped: warm for the next attempt.
      if (pending.size === 0 && this.dead.size === 0) this.keep(pool);
      else {
        this.roster.shutDown();
        pool.shutdown();
      }
      if (this.phase === ending) this.enter('stopped', { name: 'ended', stopped });
      resolve();
    };
    const ending: Phase = { name: 'ending', stopped, pending, done };
    this.enter('teardown', ending);
    if (before.name === 'opening') before.reject(new Error('the attempt was torn down while its subtasks opened'));
    this.heartbeats.stop();
    this.cancelTasks();
    watchdog = env.scheduler.schedule(watch.cancellationTimeoutMs, () => {
      const stuck = [...pending].join(', ');
      this.spec.log?.(
        `task manager${pending.size > 1 ? 's' : ''} ${stuck} did not stop ${pending.size > 1 ? 'their' : 'its'} subtasks within cancellationTimeoutMs (${watch.cancellationTimeoutMs} ms): terminated`,
      );
      done();
    });
    for (const index of pending) this.roster.stopping(index);
    for (const link of pool.links) link.send({ type: 'cancel', epoch: this.spec.epoch });
    if (pending.size === 0) done();
    return stopped;
  }

  /** During teardown: a task manager answered `cancel` or died. */
  private stoppedOne(index: number): void {
    const phase = this.phase;
    if (phase.name === 'ending' && phase.pending.delete(index) && phase.pending.size === 0) phase.done();
  }
}
