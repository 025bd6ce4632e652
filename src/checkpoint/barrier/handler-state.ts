/**
 * Task-side barrier handling as an explicit state machine, as in Flink's BarrierHandlerState. Each
 * state is one small file; each event method returns the next state. The context carries out the
 * actions (hold a channel back, take the snapshot, record in-flight data, abort).
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointBarrier } from './barrier.ts';
import type { CheckpointFailureReason } from '../failure-reason.ts';

export interface BarrierHandlerContext {
  /** Channels that still must deliver barriers (not closed). */
  readonly openChannels: number;
  /** Indexes of the channels that are not closed. */
  openChannelIndexes(): number[];
  blockChannel(channel: number): void;
  unblockAllChannels(): void;
  /** Take the snapshot for the barrier (sync phase) and forward the barrier; unaligned barriers overtake queued output. */
  triggerCheckpoint(barrier: CheckpointBarrier, unaligned: boolean): void;
  abortCheckpoint(checkpointId: CheckpointId, reason: CheckpointFailureReason): void;
  /** The first barrier of a multi-channel checkpoint arrived. */
  alignmentStarted(barrier: CheckpointBarrier): void;
  /** Unaligned: persist every buffer consumed from `channel` until its barrier arrives. */
  startRecording(channel: number): void;
  stopRecording(channel: number): void;
  /** Takes barrier n out of `channel`'s queue as received, persisting the buffers ahead of it; false if it is not queued yet. */
  pullForward(channel: number, checkpointId: CheckpointId): boolean;
  /** Every channel delivered barrier n: the in-flight data of n is complete. */
  channelStateComplete(checkpointId: CheckpointId): void;
  /** Calls back `alignmentTimedOut(n)` after `delayMs`. */
  scheduleAlignmentTimeout(checkpointId: CheckpointId, delayMs: number): void;
}

export interface BarrierHandlerState {
  readonly name: string;
  /** The checkpoint this state is collecting barriers for, if any. */
  readonly pendingCheckpoint: CheckpointId | null;
  barrierReceived(ctx: BarrierHandlerContext, channel: number, barrier: CheckpointBarrier): BarrierHandlerState;
  /** A channel closed without delivering the pending barrier. */
  channelClosed(ctx: BarrierHandlerContext, channel: number): BarrierHandlerState;
  /** The pending checkpoint is abandoned (cancel marker, newer barrier). */
  abort(ctx: BarrierHandlerContext, reason: CheckpointFailureReason): BarrierHandlerState;
  /** Alignment of `barrier`'s checkpoint took longer than its aligned timeout. */
  alignmentTimedOut(ctx: BarrierHandlerContext, barrier: CheckpointBarrier): BarrierHandlerState;
}

export class IllegalBarrierEvent extends Error {
  constructor(state: string, event: string) {
    super(`barrier handler state ${state} cannot receive ${event}`);
  }
}
