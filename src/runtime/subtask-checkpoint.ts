/**
 * The checkpointing side of one subtask (Flink's subtask checkpoint coordinator): barrier handling
 * at the input gate, the sync phase (pre-commit, barrier out, snapshots started), in-flight data
 * of unaligned checkpoints, the async phase and the acknowledgement, declines and notifications
 * to the chain. The task's mailbox runs every method; the task keeps the loop and the lifecycle.
 */
import { InjectedFault } from '../core/errors.ts';
import { preciseWallNow } from '../core/wall-time.ts';
import type { CheckpointId } from '../core/ids.ts';
import type { CheckpointBarrier } from '../checkpoint/barrier/barrier.ts';
import { CheckpointBarrierHandler } from '../checkpoint/barrier/barrier-handler.ts';
import type { BarrierHandlerContext } from '../checkpoint/barrier/handler-state.ts';
import type { OperatorSubtaskState } from '../checkpoint/ack.ts';
import type { InflightElement } from '../checkpoint/channel/buffer.ts';
import { writeChannelState } from '../checkpoint/channel/channel-state.ts';
import { InflightAborted, InflightLog } from '../checkpoint/channel/inflight-log.ts';
import type { CheckpointFailureReason } from '../checkpoint/failure-reason.ts';
import type { ChannelStateHandle } from '../checkpoint/metadata/metadata.ts';
import type { SnapshotRunner } from '../state/backend.ts';
import { keyedHandleSizes, type KeyedStateHandle } from '../state/handles/registry.ts';
import type { OperatorStateHandle } from '../storage/handles.ts';
import { streamSize } from '../storage/handles.ts';
import type { FaultSite } from './faults.ts';
import type { InputGate } from './input-gate.ts';
import type { ChainedOperator, StreamTaskConfig } from './stream-task.ts';

/** What the checkpoint side needs from its task. */
export interface CheckpointHost {
  readonly cfg: StreamTaskConfig;
  /** Records the task processed so far (for records processed during alignment). */
  readonly recordsIn: number;
  check(site: FaultSite, checkpointId?: number): void;
  putMail(mail: () => void): void;
  /** The barrier of a final checkpoint or stop-with-savepoint went out, or a newer ordinary one did. */
  barrierEmitted(barrier: CheckpointBarrier): void;
}

interface SyncFigures {
  readonly syncStartMs: number;
  readonly barrierArrivalsMs: readonly number[];
  readonly syncMs: number;
  readonly asyncStart: number;
  readonly alignmentMs: number;
  readonly alignmentRecords: number;
  readonly unaligned: boolean;
}

/** A pre-commit that did not become durable: the subtask fails instead of declining. */
class PreCommitFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('pre-commit failed');
  }
}

type SnapshotResult = { uid: string; keyed: KeyedStateHandle[]; operator: OperatorStateHandle | null };

export class SubtaskCheckpoint {
  readonly barriers: CheckpointBarrierHandler | null;
  private alignmentStartMs = 0;
  private alignmentRecordsStart = 0;
  /** Unaligned checkpoint in progress: which input channels are recorded, and the data so far. */
  private inflight: InflightLog | null = null;
  /** The newest checkpoint whose barrier this subtask emitted (0: none yet). */
  private lastEmitted = 0;
  private readonly recording: boolean[];
  /** Wall-clock ms each input channel delivered the barrier of `arrivalsOf` (-1: not yet): for the dashboard's barrier flow. */
  private arrivals: number[];
  private arrivalsOf = 0;
  /** Elements queued ahead of the barrier of `aheadOf` on each input channel when it was enqueued (-1: not yet). */
  private ahead: number[];
  private aheadOf = 0;

  constructor(private readonly host: CheckpointHost) {
    const input = host.cfg.input;
    this.barriers = input ? new CheckpointBarrierHandler(this.barrierContext(input)) : null;
    this.recording = input ? input.channels.map(() => false) : [];
    this.arrivals = input ? input.channels.map(() => -1) : [];
    this.ahead = input ? input.channels.map(() => -1) : [];
  }

  /** A barrier entered `channel`'s queue behind `elementsAhead` elements: note how many. */
  barrierQueued(channel: number, checkpointId: CheckpointId, elementsAhead: number): void {
    if (checkpointId < this.aheadOf) return;
    if (checkpointId > this.aheadOf) {
      this.aheadOf = checkpointId;
      this.ahead = this.ahead.map(() => -1);
    }
    if (this.ahead[channel] === -1) this.ahead[channel] = elementsAhead;
  }

  /** A barrier was taken from `channel` (in order, or pulled forward by an unaligned switch): note when. */
  barrierArrived(channel: number, checkpointId: CheckpointId): void {
    if (checkpointId < this.arrivalsOf) return;
    if (checkpointId > this.arrivalsOf) {
      this.arrivalsOf = checkpointId;
      this.arrivals = this.arrivals.map(() => -1);
    }
    if (this.arrivals[channel] === -1) this.arrivals[channel] = preciseWallNow(this.host.cfg.env.clock);
  }

  private get chain(): readonly ChainedOperator[] {
    return this.host.cfg.chain;
  }

  /** A buffer or watermark consumed from `channel`: an unaligned checkpoint records it when the channel's barrier is still to come. */
  consumed(channel: number, element: InflightElement): void {
    if (this.inflight !== null && this.recording[channel]) this.inflight.input[channel]!.push(element);
  }

  notifyAborted(checkpointId: CheckpointId): void {
    this.barriers?.abortPending(checkpointId);
    for (const op of this.chain) {
      op.operator.notifyCheckpointAborted(checkpointId);
      op.keyedBackend?.notifyCheckpointAborted(checkpointId);
    }
  }

  /** Tells the chain the checkpoint completed; returns the commits it started, which the task waits for before finishing. */
  notifyComplete(checkpointId: CheckpointId): Array<Promise<void>> {
    this.host.check('commit', checkpointId);
    const commits: Array<Promise<void>> = [];
    for (const op of this.chain) {
      op.keyedBackend?.notifyCheckpointComplete(checkpointId);
      const result = op.operator.notifyCheckpointComplete(checkpointId);
      if (result) commits.push(result);
    }
    return commits;
  }

  private barrierContext(gate: InputGate): BarrierHandlerContext {
    const env = this.host.cfg.env;
    return {
      get openChannels() {
        return gate.openChannels;
      },
      openChannelIndexes: () => gate.openChannelIndexes(),
      blockChannel: (ch) => gate.block(ch),
      unblockAllChannels: () => gate.unblockAll(),
      triggerCheckpoint: (barrier, unaligned) => this.perform(barrier, unaligned),
      abortCheckpoint: (id, reason) => this.abort(id, reason),
      alignmentStarted: () => {
        this.alignmentStartMs = env.clock.now();
        this.alignmentRecordsStart = this.host.recordsIn;
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
        this.barrierArrived(ch, id);
        if (this.inflight !== null) this.inflight.input[ch]!.push(...ahead);
        return true;
      },
      channelStateComplete: (id) => {
        if (this.inflight?.checkpointId === id) this.inflight.complete();
      },
      scheduleAlignmentTimeout: (id, delayMs) => {
        env.scheduler.schedule(delayMs, () => this.host.putMail(() => this.barriers!.alignmentTimedOut(id)));
      },
    };
  }

  /**
   * Buffers an unaligned barrier overtook on arriving over a remote channel: they came before it,
   * so they are in-flight data of its checkpoint on that channel (still processed as usual).
   */
  overtakenOnInput(channel: number, checkpointId: CheckpointId, buffers: readonly InflightElement[]): void {
    if (buffers.length > 0 && this.inflight?.checkpointId === checkpointId) this.inflight.input[channel]!.push(...buffers);
  }

  private abort(checkpointId: CheckpointId, reason: CheckpointFailureReason): void {
    if (this.inflight?.checkpointId === checkpointId) {
      this.inflight.abort();
      this.inflight = null;
      this.recording.fill(false);
    }
    const { cfg } = this.host;
    for (const writer of cfg.writers) writer.broadcastEvent({ kind: 'cancel', checkpointId });
    cfg.gateway.declineCheckpoint(cfg.id, checkpointId, reason);
  }

  /** Emits the barrier downstream: at the end of each channel, or (unaligned) overtaking what is queued. */
  private emitBarrier(barrier: CheckpointBarrier, log: InflightLog | null): void {
    const writers = this.host.cfg.writers;
    if (log === null) {
      for (const writer of writers) writer.broadcastEvent(barrier);
      return;
    }
    writers.forEach((writer, gate) => {
      writer.flush();
      writer.channels.forEach((ch, channel) => {
        log.output.push({ gate, channel, buffers: ch.overtakeWith(barrier) });
      });
    });
  }

  /** The sync phase: pre-commit, barrier out, snapshots started; the async phase then runs off the loop. */
  /**
   * A source task's trigger. One for a checkpoint older than a barrier this subtask already emitted
   * (the trigger was delayed on its way, and overtaken by the next) is declined and never emitted:
   * barriers leave a subtask in checkpoint order, or a consumer would align an old checkpoint after
   * a newer one (Flink declines it too).
   */
  triggerAtSource(barrier: CheckpointBarrier): void {
    if (barrier.checkpointId <= this.lastEmitted) {
      const { cfg } = this.host;
      cfg.gateway.declineCheckpoint(cfg.id, barrier.checkpointId, 'TRIGGER_OUT_OF_ORDER');
      return;
    }
    this.perform(barrier, barrier.options.alignment === 'unaligned');
  }

  perform(barrier: CheckpointBarrier, unaligned: boolean): void {
    const { cfg } = this.host;
    const id = barrier.checkpointId;
    this.lastEmitted = Math.max(this.lastEmitted, id);
    const clock = cfg.env.clock;
    const syncStart = clock.now();
    const syncStartMs = preciseWallNow(clock);
    const barrierArrivalsMs = this.arrivalsOf === id ? [...this.arrivals] : this.arrivals.map(() => -1);
    const multiInput = cfg.input !== null && cfg.input.channels.length > 1;
    const alignmentMs = multiInput ? syncStart - this.alignmentStartMs : 0;
    const alignmentRecords = multiInput ? this.host.recordsIn - this.alignmentRecordsStart : 0;
    this.host.check('sync-phase', id);
    const preCommits: Array<Promise<void>> = [];
    for (const op of this.chain) {
      const durable = op.operator.prepareSnapshotPreBarrier(id);
      if (durable) preCommits.push(durable.catch((err: unknown) => Promise.reject(new PreCommitFailed(err))));
    }
    const log = unaligned ? new InflightLog(id, cfg.input?.channels.length ?? 0) : null;
    if (log) {
      this.inflight?.abort();
      this.inflight = log;
      if (!cfg.input) log.complete();
    }
    this.emitBarrier(barrier, log);
    this.host.barrierEmitted(barrier);
    const streams = cfg.streams(id, barrier.options);
    const runners: Array<{ uid: string; keyed: SnapshotRunner<KeyedStateHandle[]> | null; operator: SnapshotRunner<OperatorStateHandle | null> }> = [];
    for (const op of this.chain) {
      op.operator.snapshotState(id);
      runners.push({
        uid: op.uid,
        // A savepoint is self-contained (the user owns and moves it), so incremental backends write it
        // in full and reuse no shared file that checkpoint retention may delete.
        keyed: op.keyedBackend ? op.keyedBackend.snapshot(id, streams, { kind: barrier.options.kind }) : null,
        operator: op.operatorBackend.snapshot(id, streams),
      });
    }
    const asyncStart = clock.now();
    // The async part yields to this task's mailbox between bounded steps: a full embedded snapshot
    // read and encoded in one go held the record path for seconds.
    const pause = () => new Promise<void>((resolve) => cfg.env.scheduler.execute(resolve));
    const figures: SyncFigures = { syncStartMs, barrierArrivalsMs, syncMs: asyncStart - syncStart, asyncStart, alignmentMs, alignmentRecords, unaligned };
    const channelState = log
      ? log.whenComplete.then(() => writeChannelState(log, streams, `${cfg.id.vertex}-${cfg.id.subtask}`))
      : Promise.resolve({ handles: [], bytes: 0 });
    void Promise.all([
      Promise.all(preCommits),
      Promise.all(
        runners.map(
          async (r): Promise<SnapshotResult> => ({ uid: r.uid, keyed: r.keyed ? await r.keyed.run(pause) : [], operator: await r.operator.run(pause) }),
        ),
      ),
      channelState,
    ]).then(
      ([, states, channels]) =>
        this.host.putMail(() => {
          if (this.inflight === log) this.inflight = null;
          this.completeAsyncPhase(id, states, channels, figures);
        }),
      (err: unknown) =>
        this.host.putMail(() => {
          if (this.inflight === log) this.inflight = null;
          if (err instanceof InflightAborted) return; // declined when it was aborted
          if (err instanceof InjectedFault) throw err;
          // A failed pre-commit lost the transaction's records: only a restore brings them back.
          if (err instanceof PreCommitFailed) throw err.cause;
          cfg.gateway.declineCheckpoint(cfg.id, id, 'UPLOAD_FAILED', err);
        }),
    );
  }

  private completeAsyncPhase(
    id: CheckpointId,
    states: SnapshotResult[],
    channels: { handles: ChannelStateHandle[]; bytes: number },
    figures: SyncFigures,
  ): void {
    const { cfg } = this.host;
    this.host.check('async-phase', id);
    const asyncMs = cfg.env.clock.now() - figures.asyncStart;
    // An incremental handle persists only its new files but restores from its whole chain,
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
    this.host.check('before-ack', id);
    cfg.gateway.acknowledgeCheckpoint({
      task: cfg.id,
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
        // Unaligned, the later barriers arrive after the snapshot (the in-flight data waits for them): read them now.
        barrierArrivalsMs: this.arrivalsOf === id ? [...this.arrivals] : figures.barrierArrivalsMs,
        buffersAhead: this.aheadOf === id ? [...this.ahead] : this.ahead.map(() => -1),
        syncStartMs: figures.syncStartMs,
      },
    });
  }
}
