/**
 * StreamTask: one subtask, run as a mailbox loop. Each step handles mails first (checkpoint
 * triggers, notifications, async-phase completions), then input buffers or a source batch, as long
 * as every output channel has credit; then it flushes its outputs and yields to the scheduler.
 */
import { assert } from '../core/assert.ts';
import { InjectedFault } from '../core/errors.ts';
import type { CheckpointId } from '../core/ids.ts';
import type { Environment } from '../core/time.ts';
import { CheckpointBarrierHandler, type BarrierMode } from '../checkpoint/barrier/barrier-handler.ts';
import type { BarrierHandlerContext } from '../checkpoint/barrier/handler-state.ts';
import type { CheckpointFailureReason } from '../checkpoint/failure-reason.ts';
import type { KeyedStateBackend, OperatorStateBackend, SnapshotRunner } from '../state/backend.ts';
import type { CheckpointStreamFactory } from '../storage/storage.ts';
import type { KeyGroupsStateHandle, OperatorStateHandle } from '../storage/handles.ts';
import { streamSize } from '../storage/handles.ts';
import { END_OF_DATA, END_OF_PARTITION, type CheckpointBarrier, type StreamElement } from './elements.ts';
import type { FaultInjector, FaultSite } from './faults.ts';
import type { InputGate } from './input-gate.ts';
import { isSourceOperator, type SourceOperator, type StreamOperator } from './operator.ts';
import type { RecordWriter } from './record-writer.ts';
import type { OperatorSubtaskState, TaskGateway, TaskId } from './task-gateway.ts';

/** A step yields after this long even with budget left, so mails and other tasks are not starved. */
const STEP_SLICE_MS = 2;

export type TaskStatus = 'CREATED' | 'RUNNING' | 'FINISHED' | 'FAILED' | 'CANCELED';

export interface ChainedOperator {
  readonly uid: string;
  readonly name: string;
  readonly operator: StreamOperator;
  readonly keyedBackend: KeyedStateBackend | null;
  readonly operatorBackend: OperatorStateBackend;
}

export interface StreamTaskConfig {
  readonly id: TaskId;
  readonly name: string;
  readonly attempt: number;
  readonly chain: readonly ChainedOperator[];
  readonly input: InputGate | null;
  readonly writers: readonly RecordWriter[];
  readonly env: Environment;
  readonly barrierMode: BarrierMode;
  readonly faults: FaultInjector;
  readonly gateway: TaskGateway;
  readonly streams: (checkpointId: CheckpointId) => CheckpointStreamFactory;
  /** Elements (buffers, events) a step handles before yielding. */
  readonly elementsPerStep: number;
  /** Records a source emits per poll. */
  readonly sourceBatchRecords: number;
}

export class StreamTask {
  status: TaskStatus = 'CREATED';
  recordsIn = 0;
  recordsOut = 0;
  private readonly mails: Array<() => void> = [];
  private scheduled = false;
  private readonly head: StreamOperator;
  private readonly source: SourceOperator | null;
  private sourceEnded = false;
  private sourceWaiting = false;
  private reachedEnd = false;
  private finalCheckpoint: CheckpointId | null = null;
  private finalCommitted = false;
  private readonly pendingCommits = new Set<Promise<void>>();
  private readonly barriers: CheckpointBarrierHandler | null;
  private alignmentStartMs = 0;
  private alignmentRecordsStart = 0;

  constructor(private readonly cfg: StreamTaskConfig) {
    assert(cfg.chain.length > 0, `task ${cfg.name}: empty chain`);
    this.head = cfg.chain[0]!.operator;
    this.source = isSourceOperator(this.head) ? this.head : null;
    assert((this.source === null) === (cfg.input !== null), `task ${cfg.name}: a task has an input gate or a source, not both`);
    this.barriers = cfg.input ? new CheckpointBarrierHandler(this.barrierContext(cfg.input), cfg.barrierMode) : null;
    if (cfg.input) {
      const wake = { onAvailable: () => this.wake() };
      for (const spec of cfg.input.channels) spec.channel.setConsumer(wake);
    }
    const credit = { onAvailable: () => this.wake() };
    for (const writer of cfg.writers) for (const channel of writer.channels) channel.setProducer(credit);
  }

  get id(): TaskId {
    return this.cfg.id;
  }

  get name(): string {
    return this.cfg.name;
  }

  get isSourceTask(): boolean {
    return this.source !== null;
  }

  /** Records the source of this task emitted (0 for other tasks). */
  get sourceRecordsOut(): number {
    return this.source?.recordsOut ?? 0;
  }

  /** Records the sinks of this chain received. */
  get sinkRecordsIn(): number {
    let n = 0;
    for (const op of this.cfg.chain) n += (op.operator as { sinkRecordsIn?: number }).sinkRecordsIn ?? 0;
    return n;
  }

  /** Opens the operators (state was restored into the backends before) and starts the loop. */
  async open(): Promise<void> {
    for (const op of this.cfg.chain) await op.operator.open();
  }

  start(): void {
    assert(this.status === 'CREATED', () => `task ${this.name}: start in ${this.status}`);
    this.status = 'RUNNING';
    this.wake();
  }

  // ---- mails from the job master ----

  triggerCheckpoint(barrier: CheckpointBarrier): void {
    assert(this.source !== null, `task ${this.name}: only source tasks are triggered`);
    this.putMail(() => this.performCheckpoint(barrier));
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.putMail(() => this.onCheckpointComplete(checkpointId));
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.putMail(() => {
      this.barriers?.abortPending(checkpointId);
      for (const op of this.cfg.chain) {
        op.operator.notifyCheckpointAborted(checkpointId);
        op.keyedBackend?.notifyCheckpointAborted(checkpointId);
      }
    });
  }

  /** Tears the task down (another subtask failed, or the job is cancelled). */
  cancel(): void {
    if (this.isTerminal()) return;
    this.status = 'CANCELED';
    this.dispose();
  }

  private putMail(mail: () => void): void {
    if (this.isTerminal()) return;
    this.mails.push(mail);
    this.wake();
  }

  private isTerminal(): boolean {
    return this.status === 'FINISHED' || this.status === 'FAILED' || this.status === 'CANCELED';
  }

  private wake(): void {
    if (this.scheduled || this.status !== 'RUNNING') return;
    this.scheduled = true;
    this.cfg.env.scheduler.execute(this.step);
  }

  // ---- the loop ----

  private readonly step = (): void => {
    this.scheduled = false;
    if (this.status !== 'RUNNING') return;
    try {
      let budget = this.cfg.elementsPerStep;
      const clock = this.cfg.env.clock;
      const deadline = clock.now() + STEP_SLICE_MS;
      while (budget-- > 0 && this.status === 'RUNNING') {
        if (clock.now() > deadline) break;
        const mail = this.mails.shift();
        if (mail) {
          mail();
          continue;
        }
        if (!this.outputsAvailable()) break;
        if (!(this.source ? this.pollSource() : this.processInput())) break;
      }
      if (this.status === 'RUNNING') for (const writer of this.cfg.writers) writer.flush();
    } catch (err) {
      this.fail(err);
      return;
    }
    if (this.status === 'RUNNING' && this.hasWork()) this.wake();
  };

  private hasWork(): boolean {
    if (this.mails.length > 0) return true;
    if (!this.outputsAvailable()) return false;
    if (this.source) return !this.sourceEnded && !this.sourceWaiting;
    return this.cfg.input!.hasAvailable();
  }

  private outputsAvailable(): boolean {
    for (const writer of this.cfg.writers) if (!writer.hasCredit()) return false;
    return true;
  }

  private check(site: FaultSite, checkpointId?: number): void {
    this.cfg.faults.check(site, { vertex: this.cfg.name, subtask: this.cfg.id.subtask, attempt: this.cfg.attempt, checkpointId });
  }

  private pollSource(): boolean {
    if (this.sourceEnded || this.sourceWaiting) return false;
    this.check('process');
    const result = this.source!.poll(this.cfg.sourceBatchRecords);
    if (result.status === 'end') {
      this.sourceEnded = true;
      this.endOfInput();
      return false;
    }
    if (result.status === 'wait') {
      this.sourceWaiting = true;
      this.cfg.env.scheduler.schedule(result.delayMs, () => {
        this.sourceWaiting = false;
        this.wake();
      });
      return false;
    }
    return true;
  }

  private processInput(): boolean {
    const gate = this.cfg.input!;
    const next = gate.poll();
    if (next === null) return false;
    this.processElement(next.element, next.channel, gate);
    return true;
  }

  private processElement(element: StreamElement, channel: number, gate: InputGate): void {
    switch (element.kind) {
      case 'buffer': {
        this.check('process');
        const input = gate.inputOf(channel);
        const { records, keyGroups } = element;
        const head = this.head;
        this.recordsIn += records.length;
        if (keyGroups) {
          for (let i = 0; i < records.length; i++) head.processElement(records[i], keyGroups[i]!, input);
        } else {
          for (let i = 0; i < records.length; i++) head.processElement(records[i], -1, input);
        }
        return;
      }
      case 'barrier':
        this.barriers!.barrierReceived(channel, element);
        return;
      case 'cancel':
        this.barriers!.cancelReceived(element.checkpointId);
        return;
      case 'end-of-data':
        if (gate.markEndOfData(channel)) this.head.endInput(gate.inputOf(channel));
        if (gate.allEndedData()) this.endOfInput();
        return;
      case 'end-of-partition':
        gate.markClosed(channel);
        this.barriers!.channelClosed(channel);
        this.tryFinish();
        return;
    }
  }

  /** Every input ended: end the chained operators in order, pass the end on, report it. */
  private endOfInput(): void {
    if (this.reachedEnd) return;
    this.reachedEnd = true;
    // A source's chain ends from its head; otherwise the head already ended input by input.
    for (let i = this.source ? 0 : 1; i < this.cfg.chain.length; i++) this.cfg.chain[i]!.operator.endInput(0);
    for (const writer of this.cfg.writers) writer.broadcastEvent(END_OF_DATA);
    this.cfg.gateway.reachedEndOfData(this.cfg.id);
  }

  // ---- checkpoints ----

  private barrierContext(gate: InputGate): BarrierHandlerContext {
    return {
      get openChannels() {
        return gate.openChannels;
      },
      blockChannel: (ch) => gate.block(ch),
      unblockAllChannels: () => gate.unblockAll(),
      triggerCheckpoint: (barrier) => this.performCheckpoint(barrier),
      abortCheckpoint: (id, reason) => this.abortCheckpoint(id, reason),
      alignmentStarted: () => {
        this.alignmentStartMs = this.cfg.env.clock.now();
        this.alignmentRecordsStart = this.recordsIn;
      },
    };
  }

  private abortCheckpoint(checkpointId: CheckpointId, reason: CheckpointFailureReason): void {
    for (const writer of this.cfg.writers) writer.broadcastEvent({ kind: 'cancel', checkpointId });
    this.cfg.gateway.declineCheckpoint(this.cfg.id, checkpointId, reason);
  }

  private performCheckpoint(barrier: CheckpointBarrier): void {
    const id = barrier.checkpointId;
    const clock = this.cfg.env.clock;
    const syncStart = clock.now();
    const multiInput = this.cfg.input !== null && this.cfg.input.channels.length > 1;
    const alignmentMs = multiInput ? syncStart - this.alignmentStartMs : 0;
    const alignmentRecords = multiInput ? this.recordsIn - this.alignmentRecordsStart : 0;
    this.check('sync-phase', id);
    for (const op of this.cfg.chain) op.operator.prepareSnapshotPreBarrier(id);
    for (const writer of this.cfg.writers) writer.broadcastEvent(barrier);
    if (barrier.options.isFinal) this.finalCheckpoint = id;
    const streams = this.cfg.streams(id);
    const runners: Array<{ uid: string; keyed: SnapshotRunner<KeyGroupsStateHandle[]> | null; operator: SnapshotRunner<OperatorStateHandle | null> }> = [];
    for (const op of this.cfg.chain) {
      op.operator.snapshotState(id);
      runners.push({
        uid: op.uid,
        keyed: op.keyedBackend ? op.keyedBackend.snapshot(id, streams) : null,
        operator: op.operatorBackend.snapshot(id, streams),
      });
    }
    const asyncStart = clock.now();
    const syncMs = asyncStart - syncStart;
    void Promise.all(
      runners.map(async (r) => ({ uid: r.uid, keyed: r.keyed ? await r.keyed.run() : [], operator: await r.operator.run() })),
    ).then(
      (states) => this.putMail(() => this.completeAsyncPhase(id, states, { syncMs, asyncStart, alignmentMs, alignmentRecords })),
      (err: unknown) =>
        this.putMail(() => {
          if (err instanceof InjectedFault) throw err;
          this.cfg.gateway.declineCheckpoint(this.cfg.id, id, 'UPLOAD_FAILED', err);
        }),
    );
  }

  private completeAsyncPhase(
    id: CheckpointId,
    states: Array<{ uid: string; keyed: KeyGroupsStateHandle[]; operator: OperatorStateHandle | null }>,
    figures: { syncMs: number; asyncStart: number; alignmentMs: number; alignmentRecords: number },
  ): void {
    this.check('async-phase', id);
    const asyncMs = this.cfg.env.clock.now() - figures.asyncStart;
    let persistedBytes = 0;
    const operators: OperatorSubtaskState[] = states.map((s) => {
      for (const h of s.keyed) persistedBytes += streamSize(h.stream);
      if (s.operator) persistedBytes += streamSize(s.operator.stream);
      return { uid: s.uid, keyed: s.keyed, operator: s.operator, channels: [] };
    });
    this.check('before-ack', id);
    this.cfg.gateway.acknowledgeCheckpoint({
      task: this.cfg.id,
      checkpointId: id,
      operators,
      metrics: {
        syncMs: figures.syncMs,
        asyncMs,
        alignmentMs: figures.alignmentMs,
        alignmentRecords: figures.alignmentRecords,
        persistedBytes,
        stateBytes: persistedBytes,
        channelStateBytes: 0,
        unaligned: false,
      },
    });
  }

  private onCheckpointComplete(checkpointId: CheckpointId): void {
    this.check('commit', checkpointId);
    for (const op of this.cfg.chain) {
      op.keyedBackend?.notifyCheckpointComplete(checkpointId);
      const result = op.operator.notifyCheckpointComplete(checkpointId);
      if (result) this.trackCommit(result);
    }
    if (this.finalCheckpoint !== null && checkpointId >= this.finalCheckpoint) {
      this.finalCommitted = true;
      if (this.source) for (const writer of this.cfg.writers) writer.broadcastEvent(END_OF_PARTITION);
      this.tryFinish();
    }
  }

  private trackCommit(commit: Promise<void>): void {
    this.pendingCommits.add(commit);
    commit.then(
      () => this.putMail(() => {
        this.pendingCommits.delete(commit);
        this.tryFinish();
      }),
      (err: unknown) => this.putMail(() => {
        throw err;
      }),
    );
  }

  // ---- the end ----

  private tryFinish(): void {
    if (this.status !== 'RUNNING' || !this.finalCommitted || this.pendingCommits.size > 0) return;
    if (this.cfg.input && !this.cfg.input.allClosed()) return;
    if (!this.source) for (const writer of this.cfg.writers) writer.broadcastEvent(END_OF_PARTITION);
    for (const op of this.cfg.chain) op.operator.close();
    this.status = 'FINISHED';
    this.disposeBackends();
    this.cfg.gateway.taskFinished(this.cfg.id);
  }

  private fail(err: unknown): void {
    if (this.isTerminal()) return;
    this.status = 'FAILED';
    this.dispose();
    this.cfg.gateway.taskFailed(this.cfg.id, err);
  }

  private dispose(): void {
    this.mails.length = 0;
    for (const op of this.cfg.chain) op.operator.dispose();
    this.disposeBackends();
  }

  private disposeBackends(): void {
    for (const op of this.cfg.chain) {
      op.keyedBackend?.dispose();
      op.operatorBackend.dispose();
    }
  }

  /** Barrier handler state, for tests and the dashboard. */
  get barrierState(): string {
    return this.barriers?.stateName ?? 'source';
  }
}
