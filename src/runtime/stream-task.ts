/**
 * StreamTask: one subtask, run as a mailbox loop. Each step handles mails first (checkpoint
 * triggers, notifications, async-phase completions), then input buffers or a source batch, as long
 * as every output channel has credit; then it flushes its outputs and yields to the scheduler.
 */
import { assert } from '../core/assert.ts';
import { InjectedFault } from '../core/errors.ts';
import type { CheckpointId } from '../core/ids.ts';
import type { Environment } from '../core/time.ts';
import { CheckpointBarrierHandler } from '../checkpoint/barrier/barrier-handler.ts';
import { InflightAborted, InflightLog } from '../checkpoint/channel/inflight-log.ts';
import { writeChannelState } from '../checkpoint/channel/channel-state.ts';
import type { ChannelStateHandle } from '../checkpoint/metadata/metadata.ts';
import type { BarrierHandlerContext } from '../checkpoint/barrier/handler-state.ts';
import type { CheckpointFailureReason } from '../checkpoint/failure-reason.ts';
import type { KeyedStateBackend, OperatorStateBackend, SnapshotRunner } from '../state/backend.ts';
import type { CheckpointStreamFactory } from '../storage/storage.ts';
import type { KeyedStateHandle, OperatorStateHandle } from '../storage/handles.ts';
import { keyedHandleSizes, streamSize } from '../storage/handles.ts';
import type { CheckpointBarrier } from '../checkpoint/barrier/barrier.ts';
import { END_OF_DATA, END_OF_PARTITION, type StreamElement } from './elements.ts';
import type { FaultInjector, FaultSite } from './faults.ts';
import type { InputGate } from './input-gate.ts';
import { isSourceOperator, type SourceOperator, type StreamOperator } from './operator.ts';
import type { RecordWriter } from './record-writer.ts';
import type { OperatorSubtaskState } from '../checkpoint/ack.ts';
import type { TaskId } from '../core/ids.ts';
import type { TaskGateway } from './task-gateway.ts';

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
  /** A stop-with-savepoint barrier went out: the source emits nothing more unless it fails. */
  private stoppedAt: CheckpointId | null = null;
  private finalCommitted = false;
  private readonly pendingCommits = new Set<Promise<void>>();
  private readonly barriers: CheckpointBarrierHandler | null;
  private alignmentStartMs = 0;
  private alignmentRecordsStart = 0;
  /** Unaligned checkpoint in progress: which input channels are recorded, and the data so far. */
  private inflight: InflightLog | null = null;
  private readonly recording: boolean[];

  constructor(private readonly cfg: StreamTaskConfig) {
    assert(cfg.chain.length > 0, `task ${cfg.name}: empty chain`);
    this.head = cfg.chain[0]!.operator;
    this.source = isSourceOperator(this.head) ? this.head : null;
    assert((this.source === null) === (cfg.input !== null), `task ${cfg.name}: a task has an input gate or a source, not both`);
    this.barriers = cfg.input ? new CheckpointBarrierHandler(this.barrierContext(cfg.input)) : null;
    this.recording = cfg.input ? cfg.input.channels.map(() => false) : [];
    if (cfg.input) {
      const gate = cfg.input;
      for (const spec of gate.channels) {
        spec.channel.setConsumer({
          onAvailable: () => this.wake(),
          onBarrierQueued: (barrier) => {
            if (barrier.options.alignment === 'unaligned') gate.priorityPending++;
            if (barrier.options.alignedTimeoutMs !== null) this.putMail(() => this.barriers!.barrierAnnounced(barrier));
          },
        });
      }
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
    this.putMail(() => this.performCheckpoint(barrier, barrier.options.alignment === 'unaligned'));
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.putMail(() => this.onCheckpointComplete(checkpointId));
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.putMail(() => {
      if (this.finalCheckpoint === checkpointId) this.finalCheckpoint = null;
      if (this.stoppedAt === checkpointId) this.stoppedAt = null; // the stop failed: go on
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
        if (!this.outputsAvailable()) {
          // Unaligned barriers are events: they overtake backpressure as they overtake data.
          if (this.cfg.input !== null && this.cfg.input.priorityPending > 0 && this.processInput()) continue;
          break;
        }
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
    if (this.cfg.input !== null && this.cfg.input.priorityPending > 0) return true;
    if (!this.outputsAvailable()) return false;
    if (this.source) return !this.sourceEnded && !this.sourceWaiting && this.stoppedAt === null;
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
    if (this.sourceEnded || this.sourceWaiting || this.stoppedAt !== null) return false;
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
        if (this.inflight !== null && this.recording[channel]) this.inflight.input[channel]!.push(element);
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
      openChannelIndexes: () => gate.openChannelIndexes(),
      blockChannel: (ch) => gate.block(ch),
      unblockAllChannels: () => gate.unblockAll(),
      triggerCheckpoint: (barrier, unaligned) => this.performCheckpoint(barrier, unaligned),
      abortCheckpoint: (id, reason) => this.abortCheckpoint(id, reason),
      alignmentStarted: () => {
        this.alignmentStartMs = this.cfg.env.clock.now();
        this.alignmentRecordsStart = this.recordsIn;
      },
      startRecording: (ch) => {
        this.recording[ch] = true;
      },
      stopRecording: (ch) => {
        this.recording[ch] = false;
      },
      pullForward: (ch, id) => {
        const ahead = gate.channels[ch]!.channel.pullForward(id);
        if (ahead === null) return false;
        this.inflight?.input[ch]!.push(...ahead);
        return true;
      },
      channelStateComplete: (id) => {
        if (this.inflight?.checkpointId === id) this.inflight.complete();
      },
      scheduleAlignmentTimeout: (id, delayMs) => {
        this.cfg.env.scheduler.schedule(delayMs, () => this.putMail(() => this.barriers!.alignmentTimedOut(id)));
      },
    };
  }

  private abortCheckpoint(checkpointId: CheckpointId, reason: CheckpointFailureReason): void {
    if (this.inflight?.checkpointId === checkpointId) {
      this.inflight.abort();
      this.inflight = null;
      this.recording.fill(false);
    }
    for (const writer of this.cfg.writers) writer.broadcastEvent({ kind: 'cancel', checkpointId });
    this.cfg.gateway.declineCheckpoint(this.cfg.id, checkpointId, reason);
  }

  /** Emits the barrier downstream: at the end of each channel, or (unaligned) overtaking what is queued. */
  private emitBarrier(barrier: CheckpointBarrier, log: InflightLog | null): void {
    if (log === null) {
      for (const writer of this.cfg.writers) writer.broadcastEvent(barrier);
      return;
    }
    this.cfg.writers.forEach((writer, gate) => {
      writer.flush();
      writer.channels.forEach((ch, channel) => log.output.push({ gate, channel, buffers: ch.overtakeWith(barrier) }));
    });
  }

  private performCheckpoint(barrier: CheckpointBarrier, unaligned: boolean): void {
    const id = barrier.checkpointId;
    const clock = this.cfg.env.clock;
    const syncStart = clock.now();
    const multiInput = this.cfg.input !== null && this.cfg.input.channels.length > 1;
    const alignmentMs = multiInput ? syncStart - this.alignmentStartMs : 0;
    const alignmentRecords = multiInput ? this.recordsIn - this.alignmentRecordsStart : 0;
    this.check('sync-phase', id);
    for (const op of this.cfg.chain) op.operator.prepareSnapshotPreBarrier(id);
    const log = unaligned ? new InflightLog(id, this.cfg.input?.channels.length ?? 0) : null;
    if (log) {
      this.inflight?.abort();
      this.inflight = log;
      if (!this.cfg.input) log.complete();
    }
    this.emitBarrier(barrier, log);
    if (barrier.options.isFinal) {
      this.finalCheckpoint = id;
      if (this.source && !this.sourceEnded) this.stoppedAt = id;
    } else if (this.finalCheckpoint !== null && id > this.finalCheckpoint) {
      // A newer checkpoint means the final one (or the stop-with-savepoint) failed, even if the
      // message saying so was lost: the job goes on.
      this.finalCheckpoint = null;
      this.stoppedAt = null;
    }
    const streams = this.cfg.streams(id);
    const runners: Array<{ uid: string; keyed: SnapshotRunner<KeyedStateHandle[]> | null; operator: SnapshotRunner<OperatorStateHandle | null> }> = [];
    for (const op of this.cfg.chain) {
      op.operator.snapshotState(id);
      runners.push({
        uid: op.uid,
        // issue 5: a savepoint must be a full snapshot (incremental backends reuse no files for it)
        keyed: op.keyedBackend ? op.keyedBackend.snapshot(id, streams, { kind: barrier.options.kind }) : null,
        operator: op.operatorBackend.snapshot(id, streams),
      });
    }
    const asyncStart = clock.now();
    const syncMs = asyncStart - syncStart;
    const channelState = log
      ? log.whenComplete.then(() => writeChannelState(log, streams, `${this.cfg.id.vertex}-${this.cfg.id.subtask}`))
      : Promise.resolve({ handles: [], bytes: 0 });
    void Promise.all([
      Promise.all(runners.map(async (r) => ({ uid: r.uid, keyed: r.keyed ? await r.keyed.run() : [], operator: await r.operator.run() }))),
      channelState,
    ]).then(
      ([states, channels]) =>
        this.putMail(() => {
          if (this.inflight === log) this.inflight = null;
          this.completeAsyncPhase(id, states, channels, { syncMs, asyncStart, alignmentMs, alignmentRecords, unaligned });
        }),
      (err: unknown) =>
        this.putMail(() => {
          if (this.inflight === log) this.inflight = null;
          if (err instanceof InflightAborted) return; // declined when it was aborted
          if (err instanceof InjectedFault) throw err;
          this.cfg.gateway.declineCheckpoint(this.cfg.id, id, 'UPLOAD_FAILED', err);
        }),
    );
  }

  private completeAsyncPhase(
    id: CheckpointId,
    states: Array<{ uid: string; keyed: KeyedStateHandle[]; operator: OperatorStateHandle | null }>,
    channels: { handles: ChannelStateHandle[]; bytes: number },
    figures: { syncMs: number; asyncStart: number; alignmentMs: number; alignmentRecords: number; unaligned: boolean },
  ): void {
    this.check('async-phase', id);
    const asyncMs = this.cfg.env.clock.now() - figures.asyncStart;
    // issue 5: an incremental handle persists only its new files but restores from its whole chain,
    // so bytes written by this checkpoint and the full state size are counted separately.
    let persistedBytes = 0;
    let stateBytes = 0;
    // Channel state belongs to the subtask; it is recorded on the chain's head operator.
    const operators: OperatorSubtaskState[] = states.map((s, i) => {
      for (const h of s.keyed) {
        const sizes = keyedHandleSizes(h);
        persistedBytes += sizes.persistedBytes;
        stateBytes += sizes.stateBytes;
      }
      if (s.operator) {
        persistedBytes += streamSize(s.operator.stream);
        stateBytes += streamSize(s.operator.stream);
      }
      return { uid: s.uid, keyed: s.keyed, operator: s.operator, channels: i === 0 ? channels.handles : [] };
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
        stateBytes,
        channelStateBytes: channels.bytes,
        unaligned: figures.unaligned,
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
