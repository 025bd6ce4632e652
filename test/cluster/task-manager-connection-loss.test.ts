/**
 * A task manager that loses a connection (issue 24 item 6), played by hand on the simulator's
 * scheduler: losing its job master (`controlLost`) stops every subtask at once and for good, so
 * nothing of it commits or speaks again; losing the data connection to a peer (`peerLost`) fails
 * exactly the subtasks with a channel to or from that peer, naming it, and fails a deploy or an
 * open under way. The connections are in-memory links that learn their end (Link.onClose).
 */
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../src/cluster/job-master/graph-fingerprint.ts';
import { TaskManager, type TaskManagerContext } from '../../src/cluster/task-manager/task-manager.ts';
import { inMemoryEncodedLinkPair } from '../../src/cluster/transport/encoded-link.ts';
import { epochOf } from '../../src/cluster/transport/epoch.ts';
import type { DataMessage, ToJobMaster, ToTaskManager } from '../../src/cluster/transport/protocol.ts';
import type { CheckpointBarrier } from '../../src/checkpoint/barrier/barrier.ts';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import { checkpointId, jobId, type TaskId } from '../../src/core/ids.ts';
import { buildExecutionPlan } from '../../src/graph/execution-plan.ts';
import { StreamEnvironment, type TwoPhaseCommitSink, type TwoPhaseCommitWriter } from '../../src/index.ts';
import { NO_FAULTS } from '../../src/runtime/faults.ts';
import { inMemoryLinkPair, type InMemoryLinkEnd } from '../../src/runtime/network/link.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob } from '../support/jobs.ts';

const E1 = epochOf(0, 1);
const SOURCE_0: TaskId = { vertex: 0, subtask: 0 };
const SINK_0: TaskId = { vertex: 1, subtask: 0 };

/** A two-phase sink whose commits the test completes by hand: each call is written down and waits. */
class HeldCommitSink implements TwoPhaseCommitSink<string, number> {
  readonly kind = 'two-phase-commit' as const;
  readonly name = 'held-commits';
  /** Checkpoint ids of every commit call, in order. */
  readonly commits: number[][] = [];
  private readonly waiting: Array<() => void> = [];

  createWriter(): TwoPhaseCommitWriter<string, number> {
    return {
      open: () => {},
      write: () => {},
      preCommit: (id) => id,
      commit: (ids) => {
        this.commits.push([...ids]);
        return new Promise<void>((resolve) => this.waiting.push(resolve));
      },
    };
  }

  /** Completes every commit in flight. */
  finishCommits(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/** Task managers of a keyed count (source `gen` -> keyBy -> count -> sink), each on its control link, all connected by data links. */
function cluster(count: number, parallelism: number) {
  const world = new SimWorld(1, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
  const env = StreamEnvironment.create({ parallelism, checkpointing: { intervalMs: 600_000 } });
  const sink = new HeldCommitSink();
  const gate = new SourceGate(0);
  buildKeyedCountJob(env, sink, { count: 1_000, keys: 4, gate });
  const parts = env.taskManagerParts(jobId('connection-loss'));
  const data = new Map<string, readonly [InMemoryLinkEnd<DataMessage, DataMessage>, InMemoryLinkEnd<DataMessage, DataMessage>]>();
  const peers = Array.from({ length: count }, () => new Map<number, InMemoryLinkEnd<DataMessage, DataMessage>>());
  for (let i = 0; i < count; i++) {
    for (let j = i + 1; j < count; j++) {
      const pair = inMemoryEncodedLinkPair<DataMessage, DataMessage>(world);
      data.set(`${i}-${j}`, pair);
      peers[i]!.set(j, pair[0]);
      peers[j]!.set(i, pair[1]);
    }
  }
  const heard: Array<Array<ToJobMaster>> = [];
  const masters: Array<InMemoryLinkEnd<ToTaskManager, ToJobMaster>> = [];
  const managers = Array.from({ length: count }, (_, index) => {
    const ctx: TaskManagerContext = {
      index,
      graph: parts.graph,
      env: world.environment,
      backends: parts.backends,
      storage: parts.storage,
      streams: (id) => parts.storage.streamFactory(id),
      faults: NO_FAULTS,
      bufferRecords: 4,
      channelCapacity: 2,
      remoteChannelCapacity: 4,
      elementsPerStep: 16,
      sourceBatchRecords: 4,
      allowNonRestoredState: false,
    };
    const [master, manager] = inMemoryLinkPair<ToTaskManager, ToJobMaster>(world);
    const got: ToJobMaster[] = [];
    master.onMessage((m) => got.push(m));
    heard.push(got);
    masters.push(master);
    return new TaskManager(ctx, manager, peers[index]!);
  });
  const plan = buildExecutionPlan(parts.graph);
  const deploy = (ofSubtask: readonly number[]): ToTaskManager => ({
    type: 'deploy',
    epoch: E1,
    runId: 'run-1',
    fingerprint: fingerprintOf(parts.graph),
    placement: { taskManagers: count, ofSubtask },
    restore: null,
    firstCheckpointFull: false,
  });
  /** Steps the world (and the promises its events settle) until `done` holds. */
  const runUntil = async (what: string, done: () => boolean): Promise<void> => {
    for (let i = 0; i < 100_000 && !done(); i++) {
      world.step();
      await yieldToEventLoop();
    }
    expect(done(), `never: ${what}`).toBe(true);
  };
  /** Runs what is ready now and what it starts without delay. */
  const settle = async (): Promise<void> => {
    let reached = false;
    world.schedule(1, () => (reached = true));
    while (!reached) {
      world.step();
      await yieldToEventLoop();
    }
  };
  const all = (type: ToJobMaster['type']) => heard.every((got) => got.some((m) => m.type === type));
  /** Deploys with `ofSubtask`, opens and starts every task manager. */
  const run = async (ofSubtask: readonly number[]): Promise<void> => {
    for (const m of masters) m.send(deploy(ofSubtask));
    await runUntil('deployed everywhere', () => all('deployed'));
    for (const m of masters) m.send({ type: 'open', epoch: E1 });
    await runUntil('opened everywhere', () => all('opened'));
    for (const m of masters) m.send({ type: 'start', epoch: E1 });
    await settle();
  };
  return { world, env, sink, gate, parts, data, heard, masters, managers, plan, deploy, runUntil, settle, run };
}

function barrier(id: number): CheckpointBarrier {
  return {
    kind: 'barrier',
    checkpointId: checkpointId(id),
    timestamp: 0,
    options: { kind: 'checkpoint', alignment: 'aligned', alignedTimeoutMs: null, isFinal: false },
  };
}

const acks = (got: readonly ToJobMaster[], id: number) => got.filter((m) => m.type === 'ack' && m.ack.checkpointId === id).length;
const failures = (got: readonly ToJobMaster[]) =>
  got.flatMap((m) => (m.type === 'task-failed' ? [`${m.task.vertex}.${m.task.subtask}: ${m.error.message}`] : []));

describe('a task manager that loses its job master', () => {
  it('stops every subtask at once, handles no later notify-complete, starts no queued commit, and sends nothing more', async () => {
    const c = cluster(1, 1);
    await c.parts.storage.initialize();
    await c.run([0, 0]);
    const [master] = c.masters;
    const [heard] = c.heard;
    const [tm] = c.managers;
    // Two completed checkpoints: the first one's commit is in flight, the second's waits behind it.
    for (const id of [1, 2]) {
      c.gate.allowUpTo(id * 10);
      master!.send({ type: 'trigger', epoch: E1, task: SOURCE_0, barrier: barrier(id) });
      await c.runUntil(`checkpoint ${id} acknowledged by both subtasks`, () => acks(heard!, id) === 2);
    }
    master!.send({ type: 'notify-complete', epoch: E1, task: SINK_0, checkpointId: checkpointId(1) });
    master!.send({ type: 'notify-complete', epoch: E1, task: SINK_0, checkpointId: checkpointId(2) });
    await c.settle();
    expect(c.sink.commits).toEqual([[1]]);
    const tasks = [...tm!.tasks];
    const before = heard!.length;

    tm!.controlLost(new Error('connection reset'));
    expect(tm!.phaseName).toBe('lost');
    expect(tasks.map((t) => t.status)).toEqual(['CANCELED', 'CANCELED']);
    // The commit in flight was already with the external system; the one queued behind it never starts.
    c.sink.finishCommits();
    // Whatever still arrives is dropped unanswered: a notify, a heartbeat, a cancel, a new deploy.
    master!.send({ type: 'notify-complete', epoch: E1, task: SINK_0, checkpointId: checkpointId(2) });
    master!.send({ type: 'heartbeat', epoch: E1, seq: 9 });
    master!.send({ type: 'cancel', epoch: E1 });
    master!.send(c.deploy([0, 0]));
    c.gate.open();
    // Past a few metrics intervals (100 ms): nothing runs any more.
    const until = c.world.now() + 500;
    c.world.schedule(500, () => {});
    while (c.world.now() < until && c.world.step()) await yieldToEventLoop();
    expect(c.sink.commits).toEqual([[1]]);
    expect(heard!.slice(before)).toEqual([]);
    expect(tm!.phaseName).toBe('lost');
    tm!.controlLost(new Error('again')); // idempotent
    expect(tm!.phaseName).toBe('lost');
  });

  it('learns it from its control connection: a reset both ends learn stops it', async () => {
    const c = cluster(1, 1);
    await c.parts.storage.initialize();
    await c.run([0, 0]);
    const tasks = [...c.managers[0]!.tasks];
    let masterLearned: Error | null = null;
    c.masters[0]!.onClose((e) => (masterLearned = e));
    c.masters[0]!.reset(new Error('connection reset'));
    expect(c.managers[0]!.phaseName).toBe('running'); // told through the scheduler, not inline
    await c.settle();
    expect(c.managers[0]!.phaseName).toBe('lost');
    expect(tasks.every((t) => t.status === 'CANCELED')).toBe(true);
    expect(masterLearned).toEqual(new Error('connection reset'));
  });
});

describe('a task manager that loses the data connection to a peer', () => {
  // gen 0, gen 1 and count 0 on task manager 0, count 1 on task manager 1, nothing on task manager 2:
  // on task manager 0 both sources send to task manager 1; count 0 reads them locally only.
  const PLACEMENT = [0, 0, 0, 1];

  it('fails the running subtasks with a channel to or from that peer, naming it; the others go on; a peer nobody uses fails nothing', async () => {
    const c = cluster(3, 2);
    await c.parts.storage.initialize();
    c.gate.allowUpTo(50);
    await c.run(PLACEMENT);
    const [tm0, tm1, tm2] = c.managers;
    tm0!.peerLost(2, new Error('connection reset'));
    await c.settle();
    expect(c.heard.map(failures)).toEqual([[], [], []]);

    c.data.get('0-1')![0].reset(new Error('connection reset'));
    await c.settle();
    expect(failures(c.heard[0]!)).toEqual([
      '0.0: data connection to task manager 1 lost: connection reset',
      '0.1: data connection to task manager 1 lost: connection reset',
    ]);
    expect(failures(c.heard[1]!)).toEqual(['1.1: data connection to task manager 0 lost: connection reset']);
    expect(failures(c.heard[2]!)).toEqual([]);
    expect(tm0!.tasks.map((t) => `${t.id.vertex}.${t.id.subtask} ${t.status}`)).toEqual(['0.0 CANCELED', '0.1 CANCELED', '1.0 RUNNING']);
    expect([tm0!.phaseName, tm1!.phaseName, tm2!.phaseName]).toEqual(['running', 'running', 'running']);
  });

  it('fails a deploy under way, and an open (or the start) of a deployment whose peer was lost before it ran', async () => {
    const c = cluster(2, 2);
    await c.parts.storage.initialize();
    const [m0, m1] = c.masters;
    const [tm0, tm1] = c.managers;
    // Deploying: the connection breaks while task manager 0 builds its subtasks.
    m0!.send(c.deploy(PLACEMENT));
    while (tm0!.phaseName !== 'deploying') c.world.step();
    tm0!.peerLost(1, new Error('connection reset'));
    await c.settle();
    expect(c.heard[0]!.filter((m) => m.type === 'deploy-failed' || m.type === 'deployed').map((m) => m.type === 'deploy-failed' && m.error.message)).toEqual([
      'data connection to task manager 1 lost: connection reset',
    ]);
    expect(tm0!.phaseName).toBe('idle');

    // Deployed, the sinks being reconciled: the open fails.
    m1!.send(c.deploy(PLACEMENT));
    await c.runUntil('deployed on task manager 1', () => c.heard[1]!.some((m) => m.type === 'deployed'));
    tm1!.peerLost(0, new Error('connection reset'));
    m1!.send({ type: 'open', epoch: E1 });
    await c.runUntil('open answered', () => c.heard[1]!.some((m) => m.type === 'open-failed' || m.type === 'opened'));
    expect(c.heard[1]!.flatMap((m) => (m.type === 'open-failed' ? [m.error.message] : m.type === 'opened' ? ['opened'] : []))).toEqual([
      'data connection to task manager 0 lost: connection reset',
    ]);

    // Opened, not started: its subtasks that use the peer fail as they start.
    m0!.send(c.deploy(PLACEMENT));
    await c.runUntil('deployed again on task manager 0', () => c.heard[0]!.some((m) => m.type === 'deployed'));
    m0!.send({ type: 'open', epoch: E1 });
    await c.runUntil('opened on task manager 0', () => c.heard[0]!.some((m) => m.type === 'opened'));
    tm0!.peerLost(1, new Error('connection reset'));
    await c.settle();
    expect(failures(c.heard[0]!)).toEqual([]);
    m0!.send({ type: 'start', epoch: E1 });
    await c.settle();
    expect(failures(c.heard[0]!)).toEqual([
      '0.0: data connection to task manager 1 lost: connection reset',
      '0.1: data connection to task manager 1 lost: connection reset',
    ]);
    expect(tm0!.tasks.find((t) => t.id.vertex === 1)!.status).toBe('RUNNING');
  });
});
