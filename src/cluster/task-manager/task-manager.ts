/**
 * TaskManager: hosts the subtasks the job master placed on it, each in a slot. It deploys them
 * from its own job graph (built from the same job module), wires channels to subtasks of the same
 * task manager as LocalChannels and to those of other task managers as remote channel ends over a
 * data link per peer, and speaks the control protocol with the job master over one link. It knows
 * nothing of the transport: the same class runs in a worker thread and in memory. A transport that
 * can tell a connection ended (Link.onClose) makes it stop for good when its job master is gone
 * (`controlLost`), and fail the subtasks that exchange data with a peer whose connection broke (`peerLost`).
 */
import type { CheckpointOptions } from '../../checkpoint/barrier/barrier.ts';
import { assert } from '../../core/assert.ts';
import { errorMessage } from '../../core/errors.ts';
import { taskKey, type CheckpointId, type TaskId } from '../../core/ids.ts';
import type { Cancellable, Environment } from '../../core/time.ts';
import { preciseWallNow } from '../../core/wall-time.ts';
import type { ChannelPlan, ExecutionPlan } from '../../graph/execution-plan.ts';
import type { JobGraph } from '../../graph/job-graph.ts';
import { LocalChannel, type InputChannel, type OutputChannel } from '../../runtime/network/channel.ts';
import type { FaultInjector } from '../../runtime/faults.ts';
import { RemoteInputChannel, RemoteOutputChannel } from '../../runtime/network/remote-channel.ts';
import type { StreamTask } from '../../runtime/stream-task.ts';
import type { TaskGateway } from '../../runtime/task-gateway.ts';
import type { StateBackendFactory } from '../../state/backend.ts';
import type { CheckpointStorage, CheckpointStreamFactory } from '../../storage/storage.ts';
import { deploy, type Deployment, type DeploymentPart } from './deployment.ts';
import { DataTraffic } from './data-traffic.ts';
import { admitsControl, type Epoch } from '../transport/epoch.ts';
import { checkFingerprint } from '../job-master/graph-fingerprint.ts';
import type { Link } from '../../runtime/network/link.ts';
import { toWireError, type DataMessage, type Placement, type ToJobMaster, type ToTaskManager } from '../transport/protocol.ts';

/** What a task manager runs its subtasks with: its graph, state backends, storage and settings. */
export interface TaskManagerContext {
  readonly index: number;
  readonly graph: JobGraph;
  readonly env: Environment;
  readonly backends: StateBackendFactory;
  readonly storage: CheckpointStorage;
  readonly streams: (checkpointId: CheckpointId, options: CheckpointOptions) => CheckpointStreamFactory;
  readonly faults: FaultInjector;
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  /** Buffers of a channel to or from another task manager (its credit window). */
  readonly remoteChannelCapacity: number;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
  readonly allowNonRestoredState: boolean;
}

type DeployMessage = Extract<ToTaskManager, { type: 'deploy' }>;

/** How often a task manager reports its subtasks' figures while they run. */
const METRICS_INTERVAL_MS = 100;

/** What a task manager tells its host (the simulator counts both); each is optional. */
export interface TaskManagerObservers {
  /** A frame or credit of an earlier attempt reached this task manager while it runs a newer one (dropped). */
  readonly staleData?: () => void;
  /** A control message not of this task manager's current epoch (an older attempt or job master) arrived and was dropped. */
  readonly staleControl?: (message: ToTaskManager) => void;
}

/** A data connection that broke, and the error the subtasks using it fail with. */
interface LostPeer {
  readonly peer: number;
  readonly error: Error;
}

/** The peers (task manager indexes) each subtask of a deployment has a channel to or from, by task key. */
type PeersOfTasks = ReadonlyMap<string, ReadonlySet<number>>;

/**
 * Where a task manager is in its life. `idle`: no subtasks (before the first deploy, after a
 * cancel). `deploying`: building and restoring them. `deployed` to `running`: it holds them, with
 * the peers each exchanges data with, and the first data connection that broke before they ran
 * (`lostPeer`: the open or the start it fails). `lost` is final: its job master is gone.
 */
type Phase =
  | { readonly name: 'idle' }
  | { readonly name: 'deploying'; readonly peers: PeersOfTasks }
  | {
      readonly name: 'deployed' | 'opening' | 'opened' | 'running';
      readonly deployment: Deployment;
      readonly peers: PeersOfTasks;
      lostPeer: LostPeer | null;
    }
  | { readonly name: 'lost'; readonly error: Error };

export class TaskManager {
  private phase: Phase = { name: 'idle' };
  /** Counts cancellations: a deploy that finds it changed after an await was cancelled meanwhile. */
  private generation = 0;
  /** The epoch of the attempt this task manager was last deployed with; null before the first deploy. */
  private current: Epoch | null = null;
  private readonly remoteInputs = new Map<number, RemoteInputChannel>();
  private readonly remoteOutputs = new Map<number, RemoteOutputChannel>();
  private metricsTimer: Cancellable | null = null;
  /** Frames and credits on the data links over this task manager's life, reported with its figures. */
  private readonly traffic = new DataTraffic();
  /** What goes to the job master: nothing once it is lost. */
  private readonly control: Pick<Link<ToJobMaster, ToTaskManager>, 'send'>;

  constructor(
    private readonly ctx: TaskManagerContext,
    control: Link<ToJobMaster, ToTaskManager>,
    /** Data links to the other task managers, by their index. */
    private readonly peers: ReadonlyMap<number, Link<DataMessage, DataMessage>>,
    private readonly observers: TaskManagerObservers = {},
  ) {
    this.control = {
      send: (m, transfer) => {
        if (this.phase.name !== 'lost') control.send(m, transfer);
      },
    };
    control.onMessage((m) => this.onControl(m));
    control.onClose?.((error) => this.controlLost(error));
    for (const [index, link] of peers) {
      link.onMessage((m) => this.onData(m));
      link.onClose?.((error) => this.peerLost(index, error));
    }
  }

  get tasks(): readonly StreamTask[] {
    return 'deployment' in this.phase ? this.phase.deployment.tasks : [];
  }

  /** Where it is in its life: idle, deploying, deployed, opening, opened, running, or lost. */
  get phaseName(): Phase['name'] {
    return this.phase.name;
  }

  /** Channel ends to other task managers, for tests and benchmarks. */
  get remoteChannels(): { readonly inputs: readonly RemoteInputChannel[]; readonly outputs: readonly RemoteOutputChannel[] } {
    return { inputs: [...this.remoteInputs.values()], outputs: [...this.remoteOutputs.values()] };
  }

  private onControl(m: ToTaskManager): void {
    if (this.phase.name === 'lost') return;
    if (!admitsControl(this.current, m)) {
      this.observers.staleControl?.(m);
      return;
    }
    switch (m.type) {
      case 'deploy':
        this.current = m.epoch;
        void this.deploy(m);
        return;
      case 'open':
        void this.open(m.epoch);
        return;
      case 'start':
        this.start();
        return;
      case 'trigger':
        this.task(m.task)?.triggerCheckpoint(m.barrier);
        return;
      case 'notify-complete':
        this.task(m.task)?.notifyCheckpointComplete(m.checkpointId);
        return;
      case 'notify-aborted':
        this.task(m.task)?.notifyCheckpointAborted(m.checkpointId);
        return;
      case 'cancel':
        this.cancel();
        this.control.send({ type: 'canceled', epoch: m.epoch });
        return;
      case 'heartbeat':
        this.control.send({ type: 'heartbeat', epoch: m.epoch, seq: m.seq, at: preciseWallNow(this.ctx.env.clock) });
        this.sendMetrics();
        return;
    }
  }

  /**
   * Reports the subtasks' figures every `intervalMs` while they run, besides each heartbeat answer:
   * progress rates over a second (`weir run`, the dashboard) would jump by whole heartbeat
   * intervals if figures came only once a second.
   */
  private reportMetricsEvery(intervalMs: number): void {
    this.metricsTimer?.cancel();
    const generation = this.generation;
    const tick = (): void => {
      if (generation !== this.generation) return;
      this.sendMetrics();
      this.metricsTimer = this.ctx.env.scheduler.schedule(intervalMs, tick);
    };
    this.metricsTimer = this.ctx.env.scheduler.schedule(intervalMs, tick);
  }

  /** The figures of the subtasks deployed now, under the epoch of the newest deploy. */
  private sendMetrics(): void {
    const epoch = this.current;
    assert(epoch !== null, () => `task manager ${this.ctx.index}: figures asked for before any deploy`);
    this.control.send({
      type: 'metrics',
      epoch,
      clockMs: this.ctx.env.clock.now(),
      tasks: this.tasks.map((t) => ({
        task: t.id,
        sourceRecordsOut: t.sourceRecordsOut,
        sinkRecordsIn: t.sinkRecordsIn,
        recordsIn: t.recordsIn,
        recordsWritten: t.recordsWritten,
        backpressuredMs: t.backpressuredMs,
        changelog: t.changelog,
      })),
      data: this.traffic.figures,
    });
  }

  private onData(m: DataMessage): void {
    if (this.phase.name === 'lost') return;
    this.traffic.received(m);
    if (m.type === 'frame') {
      const input = this.remoteInputs.get(m.channel);
      if (input) input.receive(m.frame);
      else this.dropped();
    } else {
      const output = this.remoteOutputs.get(m.channel);
      if (output) output.addCredit(m.buffers);
      else this.dropped();
    }
  }

  /** A frame or credit for no channel here: of an attempt cancelled here (channels are numbered per attempt), never delivered to another. */
  private dropped(): void {
    if (this.remoteInputs.size + this.remoteOutputs.size > 0) this.observers.staleData?.();
  }

  private task(id: TaskId): StreamTask | undefined {
    return this.tasks.find((t) => t.id.vertex === id.vertex && t.id.subtask === id.subtask);
  }

  /** Builds and restores this task manager's subtasks; they open on `open` and start on `start`. */
  private async deploy(m: DeployMessage): Promise<void> {
    this.cancel();
    const generation = this.generation;
    const ctx = this.ctx;
    const peers = new Map<string, Set<number>>();
    this.phase = { name: 'deploying', peers };
    try {
      checkFingerprint(ctx.graph, m.fingerprint, `task manager ${ctx.index}`);
      const spec = {
        graph: ctx.graph,
        epoch: m.epoch,
        runId: m.runId,
        backends: ctx.backends,
        storage: ctx.storage,
        streams: ctx.streams,
        env: ctx.env,
        faults: ctx.faults,
        gateway: this.gateway(generation, m.epoch),
        bufferRecords: ctx.bufferRecords,
        channelCapacity: ctx.channelCapacity,
        elementsPerStep: ctx.elementsPerStep,
        sourceBatchRecords: ctx.sourceBatchRecords,
        allowNonRestoredState: ctx.allowNonRestoredState,
      };
      const deployment = await deploy(spec, m.restore, m.firstCheckpointFull, (plan) => this.share(plan, m.placement, m.epoch.attempt, generation, peers));
      if (generation !== this.generation) {
        // Cancelled while restoring: nobody will start these subtasks; release what they hold.
        for (const task of deployment.tasks) task.cancel();
        return;
      }
      this.phase = { name: 'deployed', deployment, peers, lostPeer: null };
      this.control.send({ type: 'deployed', epoch: m.epoch, tasks: deployment.tasks.map((t) => ({ task: t.id, name: t.name, isSource: t.isSourceTask })) });
    } catch (err) {
      if (generation !== this.generation) return; // cancelled meanwhile: a failure of a deploy nobody waits for (a later one may run)
      this.cancel();
      this.control.send({ type: 'deploy-failed', epoch: m.epoch, error: toWireError(err) });
    }
  }

  /**
   * Opens the deployed subtasks' operators. A separate step from deploy, as in this thread: the
   * job master first reconciles the sinks with the restored checkpoint (a roll-back of commits
   * newer than it), and only then may a sink re-commit what it recovered.
   */
  private async open(epoch: Epoch): Promise<void> {
    const phase = this.phase;
    const generation = this.generation;
    if (phase.name !== 'deployed') return; // cancelled before the job master's open arrived
    if (phase.lostPeer !== null) {
      // A data connection its subtasks need broke while the job master reconciled the sinks.
      this.cancel();
      this.control.send({ type: 'open-failed', epoch, error: toWireError(phase.lostPeer.error) });
      return;
    }
    this.phase = { ...phase, name: 'opening' };
    try {
      for (const task of phase.deployment.tasks) {
        await task.open();
        if (generation !== this.generation) return; // cancelled meanwhile: cancel() tore this deployment down
      }
      this.phase = { ...phase, name: 'opened' };
      this.control.send({ type: 'opened', epoch });
    } catch (err) {
      if (generation !== this.generation) return; // cancelled meanwhile: nobody waits for this open
      this.cancel();
      this.control.send({ type: 'open-failed', epoch, error: toWireError(err) });
    }
  }

  /** Opens the remote output channels (restored output data goes out first) and starts the subtasks. */
  private start(): void {
    const phase = this.phase;
    if (phase.name !== 'opened') return;
    this.phase = { ...phase, name: 'running' };
    for (const out of this.remoteOutputs.values()) out.open();
    for (const task of phase.deployment.tasks) task.start();
    this.reportMetricsEvery(METRICS_INTERVAL_MS);
    if (phase.lostPeer !== null) this.failUsersOf(phase.lostPeer.peer, phase.lostPeer.error);
  }

  /**
   * This task manager's subtasks, with local channels among them and remote ends to the others.
   * Remote channels are numbered per attempt: task managers kept warm across a restart may still
   * receive frames and credits the previous attempt sent, and those find no channel and are dropped.
   * `peers` gets, per subtask here, the task managers it has channels to or from.
   */
  private share(plan: ExecutionPlan, placement: Placement, attempt: number, generation: number, peers: Map<string, Set<number>>): DeploymentPart {
    const tmOf = new Map(plan.subtasks.map((s, i) => [`${s.vertex}.${s.subtask}`, placement.ofSubtask[i]!]));
    const self = this.ctx.index;
    for (const c of plan.channels) {
      const producerTm = tmOf.get(`${c.producer.vertex}.${c.producer.subtask}`)!;
      const consumerTm = tmOf.get(`${c.consumer.vertex}.${c.consumer.subtask}`)!;
      if (producerTm === consumerTm) continue;
      if (producerTm === self) addPeer(peers, taskKey(c.producer), consumerTm);
      if (consumerTm === self) addPeer(peers, taskKey(c.consumer), producerTm);
    }
    const local = new Map<string, LocalChannel>();
    const channelIndex = new Map(plan.channels.map((c, i) => [c.id, attempt * plan.channels.length + i]));
    const ends: Array<InputChannel | OutputChannel> = [];
    const capacity = this.ctx.remoteChannelCapacity;
    const input = (c: ChannelPlan): InputChannel => {
      const producerTm = tmOf.get(`${c.producer.vertex}.${c.producer.subtask}`)!;
      if (producerTm === self) return this.localChannel(local, c, ends);
      const k = channelIndex.get(c.id)!;
      const link = this.peer(producerTm);
      const end = new RemoteInputChannel(c.id, capacity, (buffers) => this.phase.name !== 'lost' && link.send({ type: 'credit', channel: k, buffers }));
      // A deploy cancelled while it restored still runs to its end: its ends must not take the
      // channel numbers of the deploy that replaced it (the same attempt after a restore fallback).
      if (generation === this.generation) this.remoteInputs.set(k, end);
      ends.push(end);
      return end;
    };
    const output = (c: ChannelPlan): OutputChannel => {
      const consumerTm = tmOf.get(`${c.consumer.vertex}.${c.consumer.subtask}`)!;
      if (consumerTm === self) return this.localChannel(local, c, ends);
      const k = channelIndex.get(c.id)!;
      const link = this.peer(consumerTm);
      const end = new RemoteOutputChannel(
        c.id,
        capacity,
        (frame) => this.phase.name !== 'lost' && link.send({ type: 'frame', channel: k, frame }, [frame.buffer as ArrayBuffer]),
      );
      if (generation === this.generation) this.remoteOutputs.set(k, end);
      ends.push(end);
      return end;
    };
    return { includes: (_s, i) => placement.ofSubtask[i] === self, input, output, channels: () => ends };
  }

  private localChannel(local: Map<string, LocalChannel>, c: ChannelPlan, ends: Array<InputChannel | OutputChannel>): LocalChannel {
    let ch = local.get(c.id);
    if (!ch) {
      ch = new LocalChannel(c.id, this.ctx.channelCapacity);
      local.set(c.id, ch);
      ends.push(ch);
    }
    return ch;
  }

  private peer(index: number): Link<DataMessage, DataMessage> {
    const link = this.peers.get(index);
    if (!link) throw new Error(`task manager ${this.ctx.index} has no data link to task manager ${index}`);
    return {
      send: (m, transfer) => {
        this.traffic.sent(m); // before the send: a transferred frame's buffer is empty after it
        link.send(m, transfer);
      },
      onMessage: (handler) => link.onMessage(handler),
      close: () => link.close(),
    };
  }

  /**
   * What the subtasks of the deploy in `generation` (of attempt `epoch`) tell the job master;
   * nothing once they were cancelled (a later attempt may run on this task manager).
   */
  private gateway(generation: number, epoch: Epoch): TaskGateway {
    const send = (m: ToJobMaster) => {
      if (generation === this.generation) this.control.send(m);
    };
    return {
      acknowledgeCheckpoint: (ack) => send({ type: 'ack', epoch, ack }),
      declineCheckpoint: (task, checkpointId, reason, cause) =>
        send({ type: 'decline', epoch, task, checkpointId, reason, cause: cause === undefined ? null : toWireError(cause) }),
      reachedEndOfData: (task) => send({ type: 'end-of-data', epoch, task }),
      taskFinished: (task) => {
        this.sendMetrics(); // the final figures, before the job master hears the subtask finished
        send({ type: 'task-finished', epoch, task });
      },
      taskFailed: (task, error) => send({ type: 'task-failed', epoch, task, error: toWireError(error) }),
    };
  }

  /** Tears down the deployed subtasks (the attempt ended); frames still arriving for them are dropped. */
  cancel(): void {
    const phase = this.phase;
    this.generation++;
    this.metricsTimer?.cancel();
    this.metricsTimer = null;
    if ('deployment' in phase) {
      for (const task of phase.deployment.tasks) task.cancel();
      for (const ch of phase.deployment.channels) ch.clear();
    }
    if (phase.name !== 'lost') this.phase = { name: 'idle' };
    this.remoteInputs.clear();
    this.remoteOutputs.clear();
  }

  /**
   * The job master is gone (its connection closed or broke): every subtask stops at once, its
   * channels are released, and from now on this task manager sends nothing, drops every message,
   * and nothing of it commits (a cancelled subtask handles no notify-complete, and its sink starts
   * no commit). Final and idempotent: a job master that comes back deploys on a new connection.
   */
  controlLost(error: Error): void {
    if (this.phase.name === 'lost') return;
    this.cancel();
    this.phase = { name: 'lost', error };
  }

  /**
   * The data connection to task manager `peer` broke: what was in flight on it is gone, so every
   * subtask with a channel to or from that peer fails, naming it, and the attempt fails over
   * through the restart strategy. Subtasks without such a channel go on. A deploy or an open under
   * way fails; one done, its subtasks not yet running, fails the open or, at the start, its subtasks.
   */
  peerLost(peer: number, error: Error): void {
    const phase = this.phase;
    if (phase.name === 'idle' || phase.name === 'lost' || ![...phase.peers.values()].some((p) => p.has(peer))) return;
    const lost = new Error(`data connection to task manager ${peer} lost: ${errorMessage(error)}`, { cause: error });
    const epoch = this.current!;
    switch (phase.name) {
      case 'deploying':
        this.cancel();
        this.control.send({ type: 'deploy-failed', epoch, error: toWireError(lost) });
        return;
      case 'opening':
        this.cancel();
        this.control.send({ type: 'open-failed', epoch, error: toWireError(lost) });
        return;
      case 'deployed':
      case 'opened':
        phase.lostPeer ??= { peer, error: lost };
        return;
      case 'running':
        this.failUsersOf(peer, lost);
        return;
    }
  }

  /** Fails the running subtasks with a channel to or from `peer`: each tells the job master, with `error`. */
  private failUsersOf(peer: number, error: Error): void {
    const phase = this.phase;
    if (phase.name !== 'running') return;
    const epoch = this.current!;
    for (const task of phase.deployment.tasks) {
      if (!(phase.peers.get(taskKey(task.id))?.has(peer) ?? false) || task.status !== 'RUNNING') continue;
      task.cancel();
      this.control.send({ type: 'task-failed', epoch, task: task.id, error: toWireError(error) });
    }
  }
}

function addPeer(peers: Map<string, Set<number>>, task: string, peer: number): void {
  let set = peers.get(task);
  if (!set) peers.set(task, (set = new Set()));
  set.add(peer);
}
