/**
 * Builds one attempt of a job: channels between subtasks, operator chains with their state
 * backends, restored state, and StreamTasks. Restoring reads and verifies every state file before
 * any task starts, so a corrupt checkpoint never leaves a half-restored job running.
 */
import { CHANGELOG_STREAMS_ID } from '../../state/changelog/changelog-keyed-backend.ts';
import { SharedLogUploader } from '../../state/changelog/shared-log-uploader.ts';
import { RestoreError } from '../../core/errors.ts';
import { decodeBuffers } from '../../checkpoint/channel/channel-state.ts';
import type { InflightElement } from '../../checkpoint/channel/buffer.ts';
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointOptions } from '../../checkpoint/barrier/barrier.ts';
import type { CheckpointMetadata, OperatorStateMeta } from '../../checkpoint/metadata/metadata.ts';
import { buildExecutionPlan, type ChannelPlan, type ExecutionPlan, type SubtaskPlan } from '../../graph/execution-plan.ts';
import { chainedTo, DEFAULT_AUTO_WATERMARK_INTERVAL_MS, type JobEdge, type JobGraph, type JobVertex } from '../../graph/job-graph.ts';
import { LocalChannel, type InputChannel, type OutputChannel } from '../../runtime/network/channel.ts';
import { InputGate, type InputChannelSpec } from '../../runtime/input-gate.ts';
import type { Output, StreamOperator } from '../../runtime/operator.ts';
import { RecordWriter } from '../../runtime/record-writer.ts';
import { StreamTask, type ChainedOperator, type StreamTaskConfig } from '../../runtime/stream-task.ts';
import type { StateBackendFactory } from '../../state/backend.ts';
import type { CheckpointStorage, CheckpointStreamFactory } from '../../storage/storage.ts';
import type { Environment } from '../../core/time.ts';
import type { FaultInjector } from '../../runtime/faults.ts';
import type { TaskGateway } from '../../runtime/task-gateway.ts';
import type { Epoch } from '../transport/epoch.ts';
import { assert } from '../../core/assert.ts';
import { WATERMARK_ACTIVE, WATERMARK_IDLE } from '../../core/watermark.ts';
import { type ElementTimestamp, newElementTimestamp } from '../../runtime/time/element-timestamp.ts';
import { MailboxProcessingTimeService } from '../../runtime/time/processing-time.ts';
import { KeyedTimeServiceManager } from '../../runtime/time/keyed-timer-service.ts';

export interface DeploymentSpec {
  readonly graph: JobGraph;
  /** The attempt's epoch: the job master's leader epoch and the attempt number. */
  readonly epoch: Epoch;
  /** Unique across processes and attempts; handed to operators as `runId`. */
  readonly runId: string;
  readonly backends: StateBackendFactory;
  readonly storage: CheckpointStorage;
  /** Where subtasks write the state of checkpoint or savepoint n. */
  readonly streams: (checkpointId: CheckpointId, options: CheckpointOptions) => CheckpointStreamFactory;
  readonly env: Environment;
  readonly faults: FaultInjector;
  readonly gateway: TaskGateway;
  /** Says something about the attempt in the job's events (a task manager terminated by the watchdog). */
  readonly log?: (message: string) => void;
  /** Told of each control message of another epoch that reached the job master's side of the attempt (and was dropped). */
  readonly onStaleControl?: () => void;
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
  /** Accept snapshot state whose uid no operator of the job has. */
  readonly allowNonRestoredState: boolean;
}

export interface Deployment {
  readonly tasks: StreamTask[];
  /** Every channel end the deployment built, cleared when it is torn down. */
  readonly channels: ReadonlyArray<InputChannel | OutputChannel>;
}

/**
 * Which subtasks of the plan one deployment builds, and where the ends of their channels come
 * from: all of them with local channels (one task manager in this thread), or a task manager's
 * share with remote ends for the channels that cross to another task manager.
 */
export interface DeploymentPart {
  readonly includes: (subtask: SubtaskPlan, index: number) => boolean;
  readonly input: (channel: ChannelPlan) => InputChannel;
  readonly output: (channel: ChannelPlan) => OutputChannel;
  readonly channels: () => ReadonlyArray<InputChannel | OutputChannel>;
}

/** Every subtask, every channel a LocalChannel. */
function wholeJob(plan: ExecutionPlan, capacity: number): DeploymentPart {
  const channels = new Map(plan.channels.map((c) => [c.id, new LocalChannel(c.id, capacity)]));
  return { includes: () => true, input: (c) => channels.get(c.id)!, output: (c) => channels.get(c.id)!, channels: () => [...channels.values()] };
}

/** Checks that a snapshot fits the job (uids, maxParallelism) before anything is read. */
export function checkSnapshotCompatible(graph: JobGraph, metadata: CheckpointMetadata, allowNonRestoredState: boolean): void {
  const uids = new Map<string, JobVertex>();
  for (const v of graph.vertices) for (const node of v.chain) uids.set(node.uid, v);
  for (const op of metadata.operators) {
    const vertex = uids.get(op.uid);
    if (!vertex) {
      const hasState = op.subtasks.some((s) => s.keyed.length > 0 || (s.operator?.states.some((st) => st.count > 0) ?? false));
      if (hasState && !allowNonRestoredState) {
        throw new RestoreError(
          `snapshot ${metadata.checkpointId} has state for uid '${op.uid}' (${op.name}) but the job has no operator with that uid; pass --allow-non-restored-state to drop it`,
        );
      }
      continue;
    }
    if (op.maxParallelism !== vertex.maxParallelism) {
      throw new RestoreError(
        `uid '${op.uid}': the snapshot was taken with maxParallelism ${op.maxParallelism}, the job has ${vertex.maxParallelism}; maxParallelism cannot change`,
      );
    }
  }
}

/**
 * Operator `k`'s output: a direct call into each operator chained to it, and its record writers
 * (the edges whose `from` is `k`). The common shapes (one chained operator, one writer) get their
 * own closures, so a record costs one call per hop. Where a record goes several ways, or an
 * operator with chained consumers also has side outputs, each way gets the record with the event
 * time it came with, and the operator gets it back afterwards: an operator down one branch may set
 * the subtask's timestamp register (an assigner, a window firing) before the next branch, the next
 * record or a side output is emitted. `subtreeWriters` are the writers of `k` and of every
 * operator chained below it: an idle or active status of `k` describes those channels only.
 */
function chainOutput(
  k: number,
  next: readonly StreamOperator[],
  writers: readonly RecordWriter[],
  edges: readonly JobEdge[],
  subtreeWriters: readonly RecordWriter[],
  timestamps: ElementTimestamp,
): Output {
  const main: RecordWriter[] = [];
  const side = new Map<string, RecordWriter[]>();
  const own: RecordWriter[] = [];
  writers.forEach((w, e) => {
    const edge = edges[e]!;
    if (edge.from !== k) return;
    own.push(w);
    const tag = edge.sideOutput;
    if (tag === null) main.push(w);
    else side.set(tag, [...(side.get(tag) ?? []), w]);
  });
  const sideOutput =
    side.size === 0
      ? () => {}
      : (tagId: string, record: unknown) => {
          const targets = side.get(tagId);
          if (targets) for (const w of targets) w.emit(record);
        };
  // A status skips chained operators: it describes the output channels below this operator.
  const emitWatermarkStatus = (idle: boolean) => {
    for (const w of subtreeWriters) w.broadcastEvent(idle ? WATERMARK_IDLE : WATERMARK_ACTIVE);
  };
  // Watermarks go to every chained operator and every writer of this operator, side outputs
  // included: they are event time of the operator.
  const emitWatermark =
    next.length === 1 && own.length === 0
      ? (ms: number) => next[0]!.processWatermark(ms)
      : next.length === 0 && own.length === 1
        ? (ms: number) => own[0]!.emitWatermark(ms)
        : (ms: number) => {
            for (const op of next) op.processWatermark(ms);
            for (const w of own) w.emitWatermark(ms);
          };
  let collect: (r: unknown) => void;
  if (next.length === 1 && main.length === 0 && side.size === 0) {
    const op = next[0]!;
    collect = (r) => op.processElement(r, -1, 0);
  } else if (next.length === 0 && main.length === 1) {
    const w = main[0]!;
    collect = (r) => w.emit(r);
  } else if (next.length === 0 && main.length === 0) {
    collect = () => {};
  } else {
    collect = (r) => {
      const ts = timestamps.current;
      for (const op of next) {
        timestamps.current = ts;
        op.processElement(r, -1, 0);
      }
      timestamps.current = ts;
      for (const w of main) w.emit(r);
    };
  }
  return { collect, sideOutput, emitWatermark, emitWatermarkStatus };
}

/** Whether chain operator `k` feeds a chained operator and something else (another chained one or an edge). */
function branchesAt(v: JobVertex, k: number): boolean {
  const chained = chainedTo(v.chainParents, k).length;
  return chained > 0 && chained + v.outputs.filter((e) => e.from === k).length > 1;
}

/** The writers of chain operator `k` and of every operator chained below it, in edge order. */
function writersBelow(v: JobVertex, writers: readonly RecordWriter[], k: number): RecordWriter[] {
  const below = new Set<number>([k]);
  // Chain order puts every operator after the one it is chained to.
  v.chainParents.forEach((p, c) => {
    if (below.has(p)) below.add(c);
  });
  return writers.filter((_, e) => below.has(v.outputs[e]!.from));
}

/** Where each subtask's channel state goes back: its input channels and its writers' channels. */
export interface ChannelTargets {
  readonly headUid: string;
  readonly subtask: number;
  readonly inputs: readonly InputChannel[];
  readonly outputs: ReadonlyArray<readonly OutputChannel[]>;
}

/**
 * Puts the in-flight data of an unaligned checkpoint back into the channels before any new data:
 * per channel, the buffers the consumer had recorded (older) and then those the producer's
 * barrier overtook (newer), each in its original order.
 */
export async function restoreChannelState(
  targets: readonly ChannelTargets[],
  restored: Map<string, OperatorStateMeta>,
  storage: CheckpointStorage,
): Promise<void> {
  const fill = new Map<InputChannel | OutputChannel, { input: InflightElement[]; output: InflightElement[] }>();
  const slot = (ch: InputChannel | OutputChannel) => {
    let f = fill.get(ch);
    if (!f) fill.set(ch, (f = { input: [], output: [] }));
    return f;
  };
  for (const t of targets) {
    const handles = restored.get(t.headUid)?.subtasks.find((s) => s.subtask === t.subtask)?.channels ?? [];
    for (const h of handles) {
      const what = h.stream.type === 'file' ? h.stream.path : `channel state of ${t.headUid}#${t.subtask}`;
      const buffers = decodeBuffers(await storage.readState(h.stream), what);
      const target = h.direction === 'input' ? t.inputs[h.channel] : t.outputs[h.gate]?.[h.channel];
      if (!target)
        throw new RestoreError(
          `channel state of uid '${t.headUid}' subtask ${t.subtask} names ${h.direction} channel ${h.gate}/${h.channel}, which this job does not have; restore unaligned checkpoints into the same job graph`,
        );
      slot(target)[h.direction].push(...buffers);
    }
  }
  for (const [channel, f] of fill) for (const b of [...f.input, ...f.output]) channel.push(b);
}

/**
 * Unaligned checkpoints hold in-flight data per channel of a chain's head, which maps back only
 * onto the same parallelism and onto an operator that still heads a chain: data recorded for an
 * operator that is now chained behind another (its input no longer a channel) has nowhere to go.
 * And data written before chains branched (metadata without `chainLayout`) numbers a vertex's
 * output gates as that layout did, where an operator with several consumers ended its chain: it
 * maps onto a vertex only if no operator of it branches now.
 */
export function checkChannelStateFits(graph: JobGraph, metadata: CheckpointMetadata): void {
  const hasChannelState = (op: OperatorStateMeta | undefined): op is OperatorStateMeta => op?.subtasks.some((s) => s.channels.length > 0) === true;
  for (const v of graph.vertices) {
    const op = metadata.operators.find((o) => o.uid === v.chain[0]!.uid);
    if (op && op.parallelism !== v.parallelism && hasChannelState(op)) {
      throw new RestoreError(
        `checkpoint ${metadata.checkpointId} is unaligned and holds in-flight data of uid '${op.uid}' at parallelism ${op.parallelism}; restore it at that parallelism (not ${v.parallelism}), or rescale from a savepoint`,
      );
    }
    if (metadata.chainLayout === undefined && hasChannelState(op)) {
      const branching = v.chain.findIndex((_, k) => branchesAt(v, k));
      if (branching >= 0) {
        throw new RestoreError(
          `checkpoint ${metadata.checkpointId} is unaligned and holds in-flight data of uid '${op.uid}' written by a Weir that ended a chain at every operator with several consumers (metadata format 1 or 2); this job chains the consumers of uid '${v.chain[branching]!.uid}' into its subtask, so that data would reach the wrong operators; resume from a savepoint (take one with the version that wrote the checkpoint)`,
        );
      }
    }
    v.chain.forEach((node, k) => {
      if (k === 0) return;
      const chained = metadata.operators.find((o) => o.uid === node.uid);
      if (!hasChannelState(chained)) return;
      const behind = v.chain[v.chainParents[k]!]!;
      throw new RestoreError(
        `checkpoint ${metadata.checkpointId} is unaligned and holds in-flight data on the input of uid '${node.uid}', which this job chains behind uid '${behind.uid}' (so its input is no longer a channel); restore it into the job graph it was taken with (disableChaining() on '${node.uid}'), or resume from a savepoint`,
      );
    });
  }
}

/**
 * `firstCheckpointFull`: the snapshot restored from is not the job's own (no-claim, or a savepoint),
 * so incremental backends must not build on its files: their first checkpoint is a full base.
 */
export async function deploy(
  spec: DeploymentSpec,
  restore: CheckpointMetadata | null,
  firstCheckpointFull = false,
  part?: (plan: ExecutionPlan) => DeploymentPart,
): Promise<Deployment> {
  const { graph } = spec;
  if (restore) {
    checkSnapshotCompatible(graph, restore, spec.allowNonRestoredState);
    checkChannelStateFits(graph, restore);
  }
  const restored = new Map<string, OperatorStateMeta>((restore?.operators ?? []).map((o) => [o.uid, o]));
  const plan = buildExecutionPlan(graph);
  const share = part ? part(plan) : wholeJob(plan, spec.channelCapacity);
  const byId = new Map(plan.channels.map((c) => [c.id, c]));
  const built: BuiltSubtask[] = [];
  // One per deployment (a task manager's subtasks of an attempt, or the whole job in this thread): its changelog backends share log files.
  const changelogShare = new SharedLogUploader(spec.storage.streamFactory(CHANGELOG_STREAMS_ID), spec.env.scheduler, shareTag(spec, plan, share));
  try {
    for (const [index, sub] of plan.subtasks.entries()) {
      if (!share.includes(sub, index)) continue;
      const inputs: InputChannelSpec[] = sub.inputs.map((x) => ({ channel: share.input(byId.get(x.channel)!), input: x.input }));
      const outputs = sub.outputs.map((ids) => ids.map((id) => share.output(byId.get(id)!)));
      built.push(await deploySubtask(spec, sub, inputs, outputs, restored, firstCheckpointFull, changelogShare));
    }
    if (restore)
      await restoreChannelState(
        built.map((b) => b.target),
        restored,
        spec.storage,
      );
  } catch (err) {
    for (const b of built) disposeChain(b.chain);
    throw err;
  }
  return { tasks: built.map((b) => b.task), channels: share.channels() };
}

/**
 * The name tag of a deployment's shared log files: the run id (unique across processes and
 * attempts) and its first subtask, as task managers of one process may share a run id. Names of
 * two deployments' files never meet, so a PUT that lands late never overwrites another's file.
 */
function shareTag(spec: DeploymentSpec, plan: ExecutionPlan, share: DeploymentPart): string {
  const first = plan.subtasks.find((sub, index) => share.includes(sub, index));
  if (first === undefined) return spec.runId;
  return `${spec.runId}-${spec.graph.vertices[first.vertex]!.chain[0]!.uid}-${first.subtask}`;
}

interface BuiltSubtask {
  readonly task: StreamTask;
  readonly chain: ChainedOperator[];
  readonly target: ChannelTargets;
}

/** One subtask: its operator chain with restored state backends, record writers and task. */
async function deploySubtask(
  spec: DeploymentSpec,
  sub: SubtaskPlan,
  inputs: InputChannelSpec[],
  outputs: OutputChannel[][],
  restored: Map<string, OperatorStateMeta>,
  firstCheckpointFull: boolean,
  changelogShare: SharedLogUploader,
): Promise<BuiltSubtask> {
  const v = spec.graph.vertices[sub.vertex]!;
  const i = sub.subtask;
  const timestamps = newElementTimestamp();
  const processingTime = new MailboxProcessingTimeService(spec.env.clock, spec.env.scheduler);
  const writers = v.outputs.map((edge, e) => new RecordWriter(outputs[e]!, edge.partitioner, spec.bufferRecords, v.maxParallelism, i, timestamps));
  const chain: ChainedOperator[] = v.chain.map((node) => ({
    uid: node.uid,
    name: node.name,
    operator: node.createOperator(),
    keyedBackend: node.keySelectors.some((k) => k !== null)
      ? spec.backends.createKeyedBackend({
          uid: node.uid,
          subtask: i,
          keyGroupRange: sub.keyGroupRange,
          maxParallelism: v.maxParallelism,
          services: { storage: spec.storage, clock: spec.env.clock, scheduler: spec.env.scheduler, runId: spec.runId, changelogShare },
        })
      : null,
    operatorBackend: spec.backends.createOperatorBackend({ uid: node.uid, subtask: i }),
  }));
  try {
    await restoreChain(chain, restored, spec, i, v.parallelism, firstCheckpointFull);
  } catch (err) {
    disposeChain(chain);
    throw err;
  }
  chain.forEach((op, k) => {
    const timeServices = op.keyedBackend ? new KeyedTimeServiceManager(op.keyedBackend, processingTime, timestamps) : null;
    op.operator.setup({
      uid: op.uid,
      name: op.name,
      subtaskIndex: i,
      parallelism: v.parallelism,
      maxParallelism: v.maxParallelism,
      attempt: spec.epoch.attempt,
      runId: spec.runId,
      output: chainOutput(
        k,
        chainedTo(v.chainParents, k).map((c) => chain[c]!.operator),
        writers,
        v.outputs,
        writersBelow(v, writers, k),
        timestamps,
      ),
      keyedBackend: op.keyedBackend,
      operatorState: op.operatorBackend,
      clock: spec.env.clock,
      restored: restored.has(op.uid),
      timestamps,
      processingTime,
      autoWatermarkIntervalMs: spec.graph.autoWatermarkIntervalMs ?? DEFAULT_AUTO_WATERMARK_INTERVAL_MS,
      timeServices,
      getInternalTimerService: (name, triggerable) => {
        assert(timeServices !== null, () => `operator ${op.uid}: timer services exist on keyed operators only`);
        return timeServices.getInternalTimerService(name, triggerable);
      },
    });
  });
  const cfg: StreamTaskConfig = {
    id: { vertex: v.index, subtask: i },
    name: v.name,
    attempt: spec.epoch.attempt,
    chain,
    input: inputs.length > 0 ? new InputGate(inputs) : null,
    writers,
    env: spec.env,
    faults: spec.faults,
    gateway: spec.gateway,
    streams: spec.streams,
    elementsPerStep: spec.elementsPerStep,
    sourceBatchRecords: spec.sourceBatchRecords,
    processingTime,
    timestamps,
  };
  const target = { headUid: v.chain[0]!.uid, subtask: i, inputs: inputs.map((x) => x.channel), outputs: writers.map((w) => w.channels) };
  return { task: new StreamTask(cfg), chain, target };
}

async function restoreChain(
  chain: ChainedOperator[],
  restored: Map<string, OperatorStateMeta>,
  spec: DeploymentSpec,
  subtask: number,
  parallelism: number,
  firstCheckpointFull: boolean,
): Promise<void> {
  const read = (h: Parameters<CheckpointStorage['readState']>[0]) => spec.storage.readState(h);
  for (const op of chain) {
    const meta = restored.get(op.uid);
    if (!meta) continue;
    if (op.keyedBackend) {
      await op.keyedBackend.restore(
        meta.subtasks.flatMap((s) => s.keyed),
        read,
        { firstCheckpointFull },
      );
    }
    const operatorHandles = meta.subtasks.map((s) => s.operator);
    await op.operatorBackend.restoreRedistributed(operatorHandles, read, subtask, parallelism);
  }
}

function disposeChain(chain: ChainedOperator[]): void {
  for (const op of chain) {
    try {
      op.operator.dispose();
      op.keyedBackend?.dispose();
      op.operatorBackend.dispose();
    } catch {
      // teardown must not throw
    }
  }
}
