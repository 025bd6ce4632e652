/**
 * StreamTask: one subtask, run as a mailbox loop. Each step handles mails first (checkpoint
 * triggers, notifications, async-phase completions), then input buffers or a source batch, as long
 * as every output channel has credit; then it flushes its outputs and yields to the scheduler.
 * Its lifecycle is one state (TaskLifecycle); its checkpointing lives in SubtaskCheckpoint.
 */
import { assert } from '../core/assert.ts';
import type { CheckpointId, TaskId } from '../core/ids.ts';
import type { Environment } from '../core/time.ts';
import type { CheckpointBarrier, CheckpointOptions } from '../checkpoint/barrier/barrier.ts';
import type { InputHold, KeyedStateBackend, OperatorStateBackend } from '../state/backend.ts';
import { addChangelogFigures, type ChangelogFigures } from '../state/changelog/figures.ts';
import type { CheckpointStreamFactory } from '../storage/storage.ts';
import { END_OF_DATA, END_OF_PARTITION, type StreamElement } from './elements.ts';
import type { FaultInjector, FaultSite } from './faults.ts';
import type { InputGate } from './input-gate.ts';
import { isSourceOperator, type SourceOperator, type StreamOperator } from './operator.ts';
import type { RecordWriter } from './record-writer.ts';
import { BackpressureMeter } from './backpressure-meter.ts';
import { SubtaskCheckpoint } from './subtask-checkpoint.ts';
import type { TaskGateway } from './task-gateway.ts';
import { MAX_WATERMARK, NO_TIMESTAMP, WATERMARK_ACTIVE, WATERMARK_IDLE } from '../core/watermark.ts';
import { newElementTimestamp, type ElementTimestamp } from './time/element-timestamp.ts';
import type { MailboxProcessingTimeService } from './time/processing-time.ts';
import { WatermarkValve } from './time/watermark-valve.ts';

/** A step yields after this long even with budget left, so mails and other tasks are not starved. */
const STEP_SLICE_MS = 2;

export type TaskStatus = 'CREATED' | 'RUNNING' | 'FINISHED' | 'FAILED' | 'CANCELED';

/**
 * Where a subtask is in its life. `ended`: every input ended (a source: it has no more records).
 * `finishing`: the barrier of a final checkpoint or a stop-with-savepoint went out; the task
 * finishes once that checkpoint is committed (`stopped`: a source that had not ended stops
 * emitting at that barrier). A failed final checkpoint puts the task back to running.
 */
export type TaskLifecycle =
  | { readonly phase: 'created' }
  | { readonly phase: 'running'; readonly ended: boolean }
  | { readonly phase: 'finishing'; readonly ended: boolean; readonly finalCheckpoint: CheckpointId; readonly stopped: boolean; readonly committed: boolean }
  | { readonly phase: 'finished' | 'failed' | 'canceled' };

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
  /** Where the state of checkpoint (or savepoint) n goes; `options` of its barrier (a savepoint's target location). */
  readonly streams: (checkpointId: CheckpointId, options: CheckpointOptions) => CheckpointStreamFactory;
  /** Elements (buffers, events) a step handles before yielding. */
  readonly elementsPerStep: number;
  /** Records a source emits per poll. */
  readonly sourceBatchRecords: number;
  /** The subtask's processing-time service (the task binds its mailbox); absent in bare tests. */
  readonly processingTime?: MailboxProcessingTimeService;
  /** The subtask's event-time register, shared with its operators and writers; absent: a fresh one. */
  readonly timestamps?: ElementTimestamp;
}

const STATUS_OF: Record<TaskLifecycle['phase'], TaskStatus> = {
  created: 'CREATED',
  running: 'RUNNING',
  finishing: 'RUNNING',
  finished: 'FINISHED',
  failed: 'FAILED',
  canceled: 'CANCELED',
};

export class StreamTask {
  private lifecycle: TaskLifecycle = { phase: 'created' };
  recordsIn = 0;
  recordsOut = 0;
  private readonly mails: Array<() => void> = [];
  private scheduled = false;
  private readonly head: StreamOperator;
  private readonly source: SourceOperator | null;
  /** The source asked to be polled again later (rate limit, nothing available): a scheduling detail, not a phase. */
  private sourceIdle = false;
  private readonly pendingCommits = new Set<Promise<void>>();
  private readonly checkpoints: SubtaskCheckpoint;
  /** The event time of the record being processed (set before the head operator is called). */
  private readonly timestamps: ElementTimestamp;
  /** Combines the input channels' watermarks; null on source tasks. */
  private readonly valve: WatermarkValve | null;
  private readonly backpressure = new BackpressureMeter();

  constructor(readonly cfg: StreamTaskConfig) {
    assert(cfg.chain.length > 0, `task ${cfg.name}: empty chain`);
    this.head = cfg.chain[0]!.operator;
    this.inputHolds = cfg.chain.flatMap((op) => (op.keyedBackend?.inputHold ? [op.keyedBackend.inputHold] : []));
    this.changelogBackends = cfg.chain.flatMap((op) => (op.keyedBackend?.changelogFigures ? [op.keyedBackend] : []));
    this.source = isSourceOperator(this.head) ? this.head : null;
    assert((this.source === null) === (cfg.input !== null), `task ${cfg.name}: a task has an input gate or a source, not both`);
    this.timestamps = cfg.timestamps ?? newElementTimestamp();
    this.valve = cfg.input ? new WatermarkValve(cfg.input.channels.length) : null;
    cfg.processingTime?.bindMailbox((mail) => this.putMail(mail));
    const task = this; // the host's recordsIn reads the task's live count
    this.checkpoints = new SubtaskCheckpoint({
      cfg,
      get recordsIn() {
        return task.recordsIn;
      },
      check: (site, id) => this.check(site, id),
      putMail: (mail) => this.putMail(mail),
      barrierEmitted: (barrier) => this.barrierEmitted(barrier),
    });
    if (cfg.input) {
      const gate = cfg.input;
      const barriers = this.checkpoints.barriers!;
      gate.channels.forEach((spec, index) => {
        spec.channel.setConsumer({
          onAvailable: () => this.wake(),
          onBarrierQueued: (barrier) => {
            // An unaligned barrier was put at the front: nothing is ahead of it.
            this.checkpoints.barrierQueued(index, barrier.checkpointId, barrier.options.alignment === 'unaligned' ? 0 : spec.channel.size - 1);
            if (barrier.options.alignment === 'unaligned') gate.priorityPending++;
            if (barrier.options.alignedTimeoutMs !== null) this.putMail(() => barriers.barrierAnnounced(barrier));
          },
        });
      });
    }
    const credit = { onAvailable: () => this.wake() };
    for (const writer of cfg.writers) for (const channel of writer.channels) channel.setProducer(credit);
  }

  get status(): TaskStatus {
    return STATUS_OF[this.lifecycle.phase];
  }

  /** The lifecycle state, for tests and the dashboard. */
  get phase(): TaskLifecycle {
    return this.lifecycle;
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

  /** Records this subtask's record writers emitted downstream. */
  get recordsWritten(): number {
    let n = 0;
    for (const writer of this.cfg.writers) n += writer.recordsOut;
    return n;
  }

  /** Milliseconds this subtask spent blocked on output (no credit downstream) since it started. */
  get backpressuredMs(): number {
    return this.backpressure.blockedMs(this.cfg.env.clock.now());
  }

  /** The changelog backends' figures of this chain's keyed operators, together; null: none uses the changelog backend. */
  get changelog(): ChangelogFigures | null {
    let sum: ChangelogFigures | null = null;
    for (const b of this.changelogBackends) sum = addChangelogFigures(sum, b.changelogFigures!());
    return sum;
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
    assert(this.lifecycle.phase === 'created', () => `task ${this.name}: start in ${this.lifecycle.phase}`);
    this.lifecycle = { phase: 'running', ended: false };
    this.wake();
  }

  // ---- mails from the job master ----

  triggerCheckpoint(barrier: CheckpointBarrier): void {
    assert(this.source !== null, `task ${this.name}: only source tasks are triggered`);
    this.putMail(() => this.checkpoints.triggerAtSource(barrier));
  }

  notifyCheckpointComplete(checkpointId: CheckpointId): void {
    this.putMail(() => this.onCheckpointComplete(checkpointId));
  }

  notifyCheckpointAborted(checkpointId: CheckpointId): void {
    this.putMail(() => {
      const l = this.lifecycle;
      if (l.phase === 'finishing' && l.finalCheckpoint === checkpointId) this.lifecycle = { phase: 'running', ended: l.ended }; // the stop failed: go on
      this.checkpoints.notifyAborted(checkpointId);
    });
  }

  /** Tears the task down (another subtask failed, or the job is cancelled). */
  cancel(): void {
    if (this.isTerminal()) return;
    this.lifecycle = { phase: 'canceled' };
    this.dispose();
  }

  private putMail(mail: () => void): void {
    if (this.isTerminal()) return;
    this.mails.push(mail);
    this.wake();
  }

  private isTerminal(): boolean {
    const p = this.lifecycle.phase;
    return p === 'finished' || p === 'failed' || p === 'canceled';
  }

  private isActive(): boolean {
    return this.lifecycle.phase === 'running' || this.lifecycle.phase === 'finishing';
  }

  private wake(): void {
    if (this.scheduled || !this.isActive()) return;
    this.scheduled = true;
    this.cfg.env.scheduler.execute(this.step);
  }

  // ---- the loop ----

  private readonly step = (): void => {
    this.scheduled = false;
    if (!this.isActive()) return;
    try {
      let budget = this.cfg.elementsPerStep;
      const clock = this.cfg.env.clock;
      const stepStart = clock.now();
      const deadline = stepStart + STEP_SLICE_MS;
      if (this.outputsAvailable()) this.backpressure.unblocked(stepStart);
      while (budget-- > 0 && this.isActive()) {
        if (clock.now() > deadline) break;
        const mail = this.mails.shift();
        if (mail) {
          mail();
          continue;
        }
        if (!this.outputsAvailable()) {
          // Unaligned barriers are events: they overtake backpressure as they overtake data.
          if (this.cfg.input !== null && this.cfg.input.priorityPending > 0 && this.processInput()) continue;
          this.backpressure.blocked(clock.now());
          break;
        }
        if (!(this.source ? this.pollSource() : this.processInput())) break;
      }
      if (this.isActive()) for (const writer of this.cfg.writers) writer.flush();
    } catch (err) {
      this.fail(err);
      return;
    }
    if (this.isActive() && this.hasWork()) this.wake();
  };

  private hasWork(): boolean {
    if (this.mails.length > 0) return true;
    if (this.cfg.input !== null && this.cfg.input.priorityPending > 0) return true;
    if (!this.outputsAvailable()) return false;
    if (this.source) return this.sourceMayEmit();
    return this.cfg.input!.hasAvailable();
  }

  /** A source emits until it ended, while it is not idle and not stopped by a stop-with-savepoint. */
  private sourceMayEmit(): boolean {
    const l = this.lifecycle;
    if (this.sourceIdle) return false;
    if (l.phase === 'running') return !l.ended;
    return l.phase === 'finishing' && !l.ended && !l.stopped;
  }

  private outputsAvailable(): boolean {
    for (const writer of this.cfg.writers) if (!writer.hasCredit()) return false;
    return !this.stateHoldsInput();
  }

  /** A keyed backend that must not grow (the changelog's uploads in flight) holds input back like a full channel. */
  private stateHoldsInput(): boolean {
    for (const hold of this.inputHolds) {
      if (hold.holding()) {
        hold.onRelease(this.wakeOnRelease);
        return true;
      }
    }
    return false;
  }

  private readonly wakeOnRelease = (): void => this.wake();
  /** The chain's backends that can hold input back (empty but for the changelog backend): checked per element. */
  private readonly inputHolds: readonly InputHold[];
  /** The chain's changelog backends (their figures, read with the others a few times a second). */
  private readonly changelogBackends: readonly KeyedStateBackend[];

  private check(site: FaultSite, checkpointId?: number): void {
    this.cfg.faults.check(site, { vertex: this.cfg.name, subtask: this.cfg.id.subtask, attempt: this.cfg.attempt, checkpointId });
  }

  private pollSource(): boolean {
    if (!this.sourceMayEmit()) return false;
    this.check('process');
    const result = this.source!.poll(this.cfg.sourceBatchRecords);
    if (result.status === 'end') {
      this.endOfInput();
      return false;
    }
    if (result.status === 'wait') {
      this.sourceIdle = true;
      this.cfg.env.scheduler.schedule(result.delayMs, () => {
        this.sourceIdle = false;
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
        const { records, keyGroups, timestamps } = element;
        const head = this.head;
        const ts = this.timestamps;
        this.recordsIn += records.length;
        this.checkpoints.consumed(channel, element);
        if (timestamps) {
          ts.markTimed();
          for (let i = 0; i < records.length; i++) {
            ts.current = timestamps[i]!;
            head.processElement(records[i], keyGroups ? keyGroups[i]! : -1, input);
          }
        } else if (ts.timed) {
          // records without event time in a timed subtask: each resets what the chain set for the last
          for (let i = 0; i < records.length; i++) {
            ts.current = NO_TIMESTAMP;
            head.processElement(records[i], keyGroups ? keyGroups[i]! : -1, input);
          }
        } else if (keyGroups) {
          // untimed subtask (the hot path of jobs without event time): nothing touches the register
          for (let i = 0; i < records.length; i++) head.processElement(records[i], keyGroups[i]!, input);
        } else {
          for (let i = 0; i < records.length; i++) head.processElement(records[i], -1, input);
        }
        return;
      }
      case 'watermark': {
        this.checkpoints.consumed(channel, element);
        const out = this.valve!.inputWatermark(channel, element.timestampMs);
        if (out.idle !== null) this.emitStatus(out.idle);
        if (out.watermarkMs !== null) this.head.processWatermark(out.watermarkMs);
        return;
      }
      case 'watermark-status': {
        this.checkpoints.consumed(channel, element);
        const out = this.valve!.inputStatus(channel, element.idle);
        // Active goes out before the watermark it allows, idle after the last one.
        if (out.idle === false) this.emitStatus(false);
        if (out.watermarkMs !== null) this.head.processWatermark(out.watermarkMs);
        if (out.idle === true) this.emitStatus(true);
        return;
      }
      case 'barrier':
        this.barrierReceived(channel, element, gate);
        return;
      case 'cancel':
        this.checkpoints.barriers!.cancelReceived(element.checkpointId);
        return;
      case 'end-of-data':
        if (gate.markEndOfData(channel)) this.head.endInput(gate.inputOf(channel));
        if (gate.allEndedData()) this.endOfInput();
        return;
      case 'end-of-partition': {
        // A channel that ended its data sent the maximum watermark first; one closed by a
        // stop-with-savepoint keeps its last watermark (timers after the savepoint must not fire).
        gate.markClosed(channel);
        this.checkpoints.barriers!.channelClosed(channel);
        this.tryFinish();
        return;
      }
    }
  }

  private emitStatus(idle: boolean): void {
    for (const writer of this.cfg.writers) writer.broadcastEvent(idle ? WATERMARK_IDLE : WATERMARK_ACTIVE);
  }

  /** A barrier from a remote channel may have overtaken buffers on arrival: they are in-flight data of its checkpoint. */
  private barrierReceived(channel: number, barrier: CheckpointBarrier, gate: InputGate): void {
    this.checkpoints.barrierArrived(channel, barrier.checkpointId);
    this.checkpoints.barriers!.barrierReceived(channel, barrier);
    const overtaken = gate.channels[channel]!.channel.takeOvertaken?.(barrier.checkpointId);
    if (overtaken) this.checkpoints.overtakenOnInput(channel, barrier.checkpointId, overtaken);
  }

  /** Every input ended: end the chained operators in order, pass the end on, report it. */
  private endOfInput(): void {
    const l = this.lifecycle;
    if ((l.phase !== 'running' && l.phase !== 'finishing') || l.ended) return;
    this.lifecycle = { ...l, ended: true };
    // A source that ended sends the maximum watermark first, so bounded jobs fire every timer and window.
    if (this.source) {
      this.timestamps.current = NO_TIMESTAMP;
      this.head.processWatermark(MAX_WATERMARK);
    }
    // A source's chain ends from its head; otherwise the head already ended input by input.
    for (let i = this.source ? 0 : 1; i < this.cfg.chain.length; i++) this.cfg.chain[i]!.operator.endInput(0);
    for (const writer of this.cfg.writers) writer.broadcastEvent(END_OF_DATA);
    this.cfg.gateway.reachedEndOfData(this.cfg.id);
  }

  // ---- checkpoints: the lifecycle's part ----

  /** A final barrier starts finishing; a newer ordinary one means the final checkpoint failed (even if that message was lost). */
  private barrierEmitted(barrier: CheckpointBarrier): void {
    const l = this.lifecycle;
    if (l.phase !== 'running' && l.phase !== 'finishing') return;
    if (barrier.options.isFinal) {
      this.lifecycle = {
        phase: 'finishing',
        ended: l.ended,
        finalCheckpoint: barrier.checkpointId,
        stopped: this.source !== null && !l.ended,
        committed: false,
      };
    } else if (l.phase === 'finishing' && barrier.checkpointId > l.finalCheckpoint) {
      this.lifecycle = { phase: 'running', ended: l.ended };
    }
  }

  private onCheckpointComplete(checkpointId: CheckpointId): void {
    for (const commit of this.checkpoints.notifyComplete(checkpointId)) this.trackCommit(commit);
    const l = this.lifecycle;
    if (l.phase === 'finishing' && !l.committed && checkpointId >= l.finalCheckpoint) {
      this.lifecycle = { ...l, committed: true };
      if (this.source) for (const writer of this.cfg.writers) writer.broadcastEvent(END_OF_PARTITION);
      this.tryFinish();
    }
  }

  private trackCommit(commit: Promise<void>): void {
    this.pendingCommits.add(commit);
    commit.then(
      () =>
        this.putMail(() => {
          this.pendingCommits.delete(commit);
          this.tryFinish();
        }),
      (err: unknown) =>
        this.putMail(() => {
          throw err;
        }),
    );
  }

  // ---- the end ----

  private tryFinish(): void {
    const l = this.lifecycle;
    if (l.phase !== 'finishing' || !l.committed || this.pendingCommits.size > 0) return;
    if (this.cfg.input && !this.cfg.input.allClosed()) return;
    if (!this.source) for (const writer of this.cfg.writers) writer.broadcastEvent(END_OF_PARTITION);
    for (const op of this.cfg.chain) op.operator.close();
    this.lifecycle = { phase: 'finished' };
    this.disposeBackends();
    this.cfg.gateway.taskFinished(this.cfg.id);
  }

  private fail(err: unknown): void {
    if (this.isTerminal()) return;
    this.lifecycle = { phase: 'failed' };
    this.dispose();
    this.cfg.gateway.taskFailed(this.cfg.id, err);
  }

  private dispose(): void {
    this.mails.length = 0;
    this.cfg.processingTime?.dispose();
    for (const op of this.cfg.chain) op.operator.dispose();
    this.disposeBackends();
  }

  private disposeBackends(): void {
    this.cfg.processingTime?.dispose();
    for (const op of this.cfg.chain) {
      op.keyedBackend?.dispose();
      op.operatorBackend.dispose();
    }
  }

  /** Barrier handler state, for tests and the dashboard. */
  get barrierState(): string {
    return this.checkpoints.barriers?.stateName ?? 'source';
  }
}
