/**
 * Fencing by epoch (issue 23 item 2): every control message names its attempt's epoch, and a
 * message of another epoch is dropped and counted, by a task manager, by the job master's side of
 * an attempt on task managers, and by the job master itself. Late messages are injected by hand
 * (on a FIFO link they cannot arrive late today; over TCP or from a stale job master they can).
 */
import { describe, expect, it } from 'vitest';
import type { AttemptDeployment, Deployer, TaskHandle } from '../../src/cluster/job-master/attempt-deployment.ts';
import type { DeploymentSpec } from '../../src/cluster/task-manager/deployment.ts';
import { epochOf, sameEpoch, type Epoch } from '../../src/cluster/transport/epoch.ts';
import { fingerprintOf } from '../../src/cluster/job-master/graph-fingerprint.ts';
import { JobMaster, type JobMasterConfig } from '../../src/cluster/job-master/job-master.ts';
import { remoteDeployer, type TaskManagerPool } from '../../src/cluster/job-master/remote-deployment.ts';
import { TaskManager, type TaskManagerContext } from '../../src/cluster/task-manager/task-manager.ts';
import { inMemoryLinkPair, type Link } from '../../src/runtime/network/link.ts';
import type { ToJobMaster, ToTaskManager } from '../../src/cluster/transport/protocol.ts';
import type { CheckpointAck } from '../../src/checkpoint/ack.ts';
import { yieldToEventLoop } from '../../src/core/adapters.ts';
import { checkpointId, jobId, type TaskId } from '../../src/core/ids.ts';
import { buildExecutionPlan } from '../../src/graph/execution-plan.ts';
import { CollectSink, StreamEnvironment, type JobEvent } from '../../src/index.ts';
import { NO_FAULTS } from '../../src/runtime/faults.ts';
import type { TaskGateway } from '../../src/runtime/task-gateway.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob } from '../support/jobs.ts';

const E0 = epochOf(0, 0);
const E1 = epochOf(0, 1);
const E2 = epochOf(0, 2);
const TASK: TaskId = { vertex: 0, subtask: 0 };

function quietWorld(seed = 1): SimWorld {
  return new SimWorld(seed, { stepCostMsMax: 0, slowProbability: 0, slowDelayMsMax: 0 });
}

/** Runs the world (and the promises its events settle) until `done` holds; fails if it never does. */
async function runUntil(world: SimWorld, what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 100_000 && !done(); i++) {
    const stepped = world.step();
    await yieldToEventLoop();
    if (!stepped && world.idle && !done()) await yieldToEventLoop();
  }
  expect(done(), `never: ${what}`).toBe(true);
}

/**
 * Runs everything ready now and what it starts without delay, and no timer further out: the world
 * advances time only once nothing is ready, so a marker 1 ms out fires after all of it.
 */
async function settle(world: SimWorld): Promise<void> {
  let reached = false;
  world.schedule(1, () => (reached = true));
  while (!reached) {
    world.step();
    await yieldToEventLoop();
  }
}

/** A one-vertex-chain keyed count whose source waits at a closed gate: nothing runs unless told. */
function jobParts() {
  const env = StreamEnvironment.create({
    parallelism: 1,
    checkpointing: { intervalMs: 600_000 },
    restartStrategy: { type: 'fixed-delay', attempts: 5, delayMs: 5 },
  });
  buildKeyedCountJob(env, new CollectSink<string>(), { count: 10, keys: 2, gate: new SourceGate(0) });
  return { env, parts: env.taskManagerParts(jobId('stale-control')) };
}

describe('a task manager fenced by epoch', () => {
  it('drops and counts every control message not of its current epoch; a deploy of a newer epoch begins the next attempt', async () => {
    const world = quietWorld();
    const { env, parts } = jobParts();
    const ctx: TaskManagerContext = {
      index: 0,
      graph: parts.graph,
      env: world.environment,
      backends: parts.backends,
      storage: parts.storage,
      streams: (id) => parts.storage.streamFactory(id),
      faults: NO_FAULTS,
      bufferRecords: env.options.bufferRecords,
      channelCapacity: env.options.channelCapacity,
      remoteChannelCapacity: env.options.remoteChannelCapacity,
      elementsPerStep: 64,
      sourceBatchRecords: 8,
      allowNonRestoredState: false,
    };
    await parts.storage.initialize();
    const [master, manager] = inMemoryLinkPair<ToTaskManager, ToJobMaster>(world);
    const heard: ToJobMaster[] = [];
    master.onMessage((m) => heard.push(m));
    const stale: ToTaskManager[] = [];
    new TaskManager(ctx, manager, new Map(), { staleControl: (m) => stale.push(m) });
    const plan = buildExecutionPlan(parts.graph);
    const deploy = (epoch: Epoch): ToTaskManager => ({
      type: 'deploy',
      epoch,
      runId: `run-${epoch.attempt}`,
      fingerprint: fingerprintOf(parts.graph),
      placement: { taskManagers: 1, ofSubtask: plan.subtasks.map(() => 0) },
      restore: null,
      firstCheckpointFull: false,
    });
    const answered = (type: ToJobMaster['type'], epoch: Epoch) => heard.some((m) => m.type === type && m.type !== 'hello' && sameEpoch(m.epoch, epoch));

    master.send(deploy(E1));
    await runUntil(world, 'deployed in epoch 1', () => answered('deployed', E1));
    const barrier = {
      checkpointId: checkpointId(1),
      timestamp: 0,
      options: { kind: 'checkpoint', alignment: 'aligned', alignedTimeoutMs: 0, isFinal: false },
    } as never;
    const late: ToTaskManager[] = [
      { type: 'heartbeat', epoch: E0, seq: 5 },
      { type: 'trigger', epoch: E0, task: TASK, barrier },
      { type: 'notify-complete', epoch: E0, task: TASK, checkpointId: checkpointId(1) },
      { type: 'notify-aborted', epoch: E0, task: TASK, checkpointId: checkpointId(1) },
      { type: 'open', epoch: E0 },
      { type: 'start', epoch: E0 },
      { type: 'cancel', epoch: E0 },
      deploy(E0),
      // A message of a newer leader that did not deploy here first is no more this attempt's.
      { type: 'heartbeat', epoch: epochOf(1, 1), seq: 6 },
    ];
    const before = heard.length;
    for (const m of late) master.send(m);
    await settle(world);
    expect(stale).toEqual(late);
    expect(heard.slice(before)).toEqual([]); // not one answered: not the cancel, not the heartbeats, not the deploy

    master.send({ type: 'heartbeat', epoch: E1, seq: 7 });
    master.send({ type: 'open', epoch: E1 });
    await runUntil(world, 'opened in epoch 1', () => answered('opened', E1));
    expect(heard.filter((m) => m.type === 'heartbeat')).toEqual([{ type: 'heartbeat', epoch: E1, seq: 7, at: expect.any(Number) }]);
    expect(heard.filter((m) => m.type === 'metrics').every((m) => m.type === 'metrics' && sameEpoch(m.epoch, E1))).toBe(true);
    master.send({ type: 'cancel', epoch: E1 });
    await runUntil(world, 'canceled in epoch 1', () => answered('canceled', E1));

    // The next attempt: its deploy is taken, and from then on epoch 1 is stale too.
    master.send(deploy(E2));
    await runUntil(world, 'deployed in epoch 2', () => answered('deployed', E2));
    master.send({ type: 'cancel', epoch: E1 });
    master.send({ type: 'cancel', epoch: E2 });
    await runUntil(world, 'canceled in epoch 2', () => answered('canceled', E2));
    expect(stale).toHaveLength(late.length + 1);
    expect(stale.at(-1)).toEqual({ type: 'cancel', epoch: E1 });
  });
});

/** A pool of one task manager the test plays: it reads what the job master sends and answers by hand. */
function scriptedPool() {
  const sent: ToTaskManager[] = [];
  let handler: ((m: ToJobMaster) => void) | null = null;
  let shutdown = false;
  const link: Link<ToTaskManager, ToJobMaster> = {
    send: (m) => sent.push(m),
    onMessage: (h) => (handler = h),
    close: () => {},
  };
  const pool: TaskManagerPool = {
    links: [link],
    taskManagers: [{ host: 'scripted', pid: null, slots: null, transport: 'in-memory', dataAddress: null }],
    onFailure: () => {},
    shutdown: () => (shutdown = true),
  };
  return { pool, sent, answer: (m: ToJobMaster) => handler!(m), isShutDown: () => shutdown };
}

/** A gateway that writes down what reaches it. */
function recordingGateway(): { gateway: TaskGateway; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    gateway: {
      acknowledgeCheckpoint: (ack) => calls.push(`ack ${ack.checkpointId}`),
      declineCheckpoint: (_t, id) => calls.push(`decline ${id}`),
      reachedEndOfData: () => calls.push('end-of-data'),
      taskFinished: () => calls.push('task-finished'),
      taskFailed: (_t, error) => calls.push(`task-failed ${(error as Error).message}`),
    },
  };
}

describe("the job master's side of an attempt on task managers, fenced by epoch", () => {
  it('drops and counts every message of another epoch in each phase: a late deployed, opened, ack or task failure never moves or fails this attempt', async () => {
    const world = quietWorld();
    const { env, parts } = jobParts();
    const tm = scriptedPool();
    const { gateway, calls } = recordingGateway();
    let stale = 0;
    const spec: DeploymentSpec = {
      graph: parts.graph,
      epoch: E1,
      runId: 'run-1',
      backends: parts.backends,
      storage: parts.storage,
      streams: (id) => parts.storage.streamFactory(id),
      env: world.environment,
      faults: NO_FAULTS,
      gateway,
      onStaleControl: () => stale++,
      bufferRecords: env.options.bufferRecords,
      channelCapacity: env.options.channelCapacity,
      elementsPerStep: 64,
      sourceBatchRecords: 8,
      allowNonRestoredState: false,
    };
    const deployer = remoteDeployer(
      async () => tm.pool,
      (plan) => ({ taskManagers: 1, ofSubtask: plan.subtasks.map(() => 0) }),
      world.environment,
      { heartbeat: { intervalMs: 600_000, timeoutMs: 1_200_000, startTimeoutMs: 1_200_000 }, cancellationTimeoutMs: 600_000 },
    );
    let deployment: AttemptDeployment | null = null;
    void deployer(spec, null, false).then((d) => (deployment = d));
    await runUntil(world, 'the deploy sent', () => tm.sent.some((m) => m.type === 'deploy'));
    const ack = { checkpointId: checkpointId(3), task: TASK } as unknown as CheckpointAck;
    const wire = { name: 'Error', message: 'late', code: null, file: null, stack: null };
    const tasks = [{ task: TASK, name: 'gen', isSource: true }];

    // Deploying: a deployed or deploy-failed of attempt 0 neither completes nor fails this deploy.
    tm.answer({ type: 'deployed', epoch: E0, tasks });
    tm.answer({ type: 'deploy-failed', epoch: E0, error: wire });
    await settle(world);
    expect([deployment, stale]).toEqual([null, 2]);
    tm.answer({ type: 'deployed', epoch: E1, tasks });
    await runUntil(world, 'deployed', () => deployment !== null);
    const d = deployment!;

    // Opening: a late opened or open-failed changes nothing; this epoch's opened does.
    let opened: 'no' | 'yes' | 'failed' = 'no';
    d.open().then(
      () => (opened = 'yes'),
      () => (opened = 'failed'),
    );
    tm.answer({ type: 'open-failed', epoch: E0, error: wire });
    tm.answer({ type: 'opened', epoch: E0 });
    await settle(world);
    expect([opened, stale]).toEqual(['no', 4]);
    tm.answer({ type: 'opened', epoch: E1 });
    await settle(world);
    expect(opened).toBe('yes');
    d.start();

    // Running: nothing of attempt 0 reaches the gateway; the same messages of attempt 1 do.
    const late: ToJobMaster[] = [
      { type: 'ack', epoch: E0, ack },
      { type: 'decline', epoch: E0, task: TASK, checkpointId: checkpointId(3), reason: 'CHECKPOINT_EXPIRED' as never, cause: null },
      { type: 'end-of-data', epoch: E0, task: TASK },
      { type: 'task-finished', epoch: E0, task: TASK },
      { type: 'task-failed', epoch: E0, task: TASK, error: wire },
      {
        type: 'metrics',
        epoch: E0,
        clockMs: 1_000,
        tasks: [{ task: TASK, sourceRecordsOut: 99, sinkRecordsIn: 0, recordsIn: 0, recordsWritten: 0, backpressuredMs: 0, changelog: null }],
        data: { bytesSent: 1, bytesReceived: 1, messagesSent: 1, messagesReceived: 1 },
      },
      { type: 'heartbeat', epoch: E0, seq: 1, at: 1_700_000_000_000.25 },
      { type: 'canceled', epoch: E0 },
    ];
    for (const m of late) tm.answer(m);
    expect(stale).toBe(4 + late.length);
    expect(calls).toEqual([]);
    expect(d.tasks[0]!.sourceRecordsOut).toBe(0);
    expect(d.tasks[0]!.status).toBe('RUNNING');
    tm.answer({ type: 'ack', epoch: E1, ack });
    tm.answer({ type: 'task-failed', epoch: E1, task: TASK, error: wire });
    expect(calls).toEqual(['ack 3', 'task-failed late']);

    // Ending: a late canceled does not end the teardown; this epoch's does, and the pool is kept warm.
    let stopped = false;
    void d.teardown().then(() => (stopped = true));
    tm.answer({ type: 'canceled', epoch: E0 });
    await settle(world);
    expect([stopped, stale]).toEqual([false, 5 + late.length]);
    tm.answer({ type: 'canceled', epoch: E1 });
    await settle(world);
    expect(stopped).toBe(true);
    expect(tm.isShutDown()).toBe(false);
    // Everything the job master sent named attempt 1.
    expect(tm.sent.map((m) => m.type).filter((t) => t !== 'heartbeat')).toEqual(['deploy', 'open', 'start', 'cancel']);
    expect(tm.sent.every((m) => sameEpoch(m.epoch, E1))).toBe(true);
  });
});

/** A job master's configuration for the job of jobParts(). */
function masterConfig(env: StreamEnvironment, parts: ReturnType<typeof jobParts>['parts']): JobMasterConfig {
  return {
    jobId: jobId('stale-control'),
    name: 'stale-control',
    graph: parts.graph,
    checkpointing: env.options.checkpointing,
    restartStrategy: env.options.restartStrategy,
    backends: parts.backends,
    storage: parts.storage,
    bufferRecords: env.options.bufferRecords,
    channelCapacity: env.options.channelCapacity,
    restoreCandidates: [],
    allowNonRestoredState: false,
    acceptDuplicates: false,
    claim: false,
  };
}

/** Subtasks that do nothing: the test plays their messages through the gateway each attempt was given. */
function recordingDeployer(): { deployer: Deployer; specs: DeploymentSpec[] } {
  const specs: DeploymentSpec[] = [];
  const deployer: Deployer = async (spec) => {
    specs.push(spec);
    const task: TaskHandle = {
      id: TASK,
      name: 'only',
      isSourceTask: true,
      status: 'RUNNING',
      sourceRecordsOut: 0,
      sinkRecordsIn: 0,
      recordsIn: 0,
      recordsWritten: 0,
      backpressuredMs: 0,
      changelog: null,
      triggerCheckpoint: () => {},
      notifyCheckpointComplete: () => {},
      notifyCheckpointAborted: () => {},
    };
    return { tasks: [task], open: async () => {}, start: () => {}, teardown: async () => {}, abandon: () => {} };
  };
  return { deployer, specs };
}

describe('the job master fenced by attempt', () => {
  it('a late ack, decline, end of data, finish or failure of a torn-down attempt is dropped and counted, and never acks, finishes or fails the current one', async () => {
    const world = quietWorld(3);
    const { env, parts } = jobParts();
    const { deployer, specs } = recordingDeployer();
    const events: JobEvent[] = [];
    const master = new JobMaster({ ...masterConfig(env, parts), deployer, leaderEpoch: 4 }, world.environment, { onEvent: (e) => events.push(e) });
    const running = () => events.filter((e) => e.type === 'running').length;
    master.start();
    await runUntil(world, 'attempt 0 running', () => running() === 1);
    expect(master.epoch).toEqual(epochOf(4, 0));
    expect(specs[0]!.epoch).toEqual(epochOf(4, 0));

    specs[0]!.gateway.taskFailed(TASK, new Error('attempt 0 fails'));
    await runUntil(world, 'attempt 1 running', () => running() === 2);
    expect(master.epoch).toEqual(epochOf(4, 1));
    expect(master.staleControlMessages).toBe(0);

    // Attempt 0's subtasks speak up late (a slow link, a task manager that had not heard the cancel).
    const old = specs[0]!.gateway;
    old.acknowledgeCheckpoint({ checkpointId: checkpointId(1), task: TASK } as unknown as CheckpointAck);
    old.declineCheckpoint(TASK, checkpointId(1), 'CHECKPOINT_DECLINED' as never);
    old.reachedEndOfData(TASK);
    old.taskFinished(TASK);
    old.taskFailed(TASK, new Error('late failure of attempt 0'));
    await settle(world);
    expect(master.staleControlMessages).toBe(5);
    expect(master.metrics()).toMatchObject({ status: 'RUNNING', attempt: 1 });
    expect(events.filter((e) => e.type === 'restarting')).toHaveLength(1);
    expect(master.exceptions.map((x) => x.message)).toEqual(["subtask 0 of 'only': attempt 0 fails"]);

    // The current attempt's own failure still counts: the path the late one was kept from is live.
    specs[1]!.gateway.taskFailed(TASK, new Error('attempt 1 fails'));
    await runUntil(world, 'attempt 2 running', () => running() === 3);
    expect(master.exceptions.map((x) => x.attempt)).toEqual([0, 1]);
    expect(master.staleControlMessages).toBe(5);
    await master.cancel();
  });

  it('names a leader epoch that is not a non-negative integer in the error', () => {
    const world = quietWorld();
    const { env, parts } = jobParts();
    const config = { ...masterConfig(env, parts), leaderEpoch: -1 };
    expect(() => new JobMaster(config, world.environment)).toThrow(/leaderEpoch: must be an integer >= 0, got -1/);
  });
});
