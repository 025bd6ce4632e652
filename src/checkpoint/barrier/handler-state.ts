/**
 * Task-side barrier handling as an explicit state machine, as in Flink's BarrierHandlerState. Each
 * state is one small file; each event method returns the next state. The context carries out the
 * actions (block a channel, trigger the snapshot, abort).
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointBarrier } from '../../runtime/elements.ts';
import type { CheckpointFailureReason } from '../failure-reason.ts';

export interface BarrierHandlerContext {
  /** Channels that still must deliver barriers (not closed). */
  readonly openChannels: number;
  blockChannel(channel: number): void;
  unblockAllChannels(): void;
  /** Take the snapshot for the barrier (sync phase), forward the barrier. */
  triggerCheckpoint(barrier: CheckpointBarrier): void;
  abortCheckpoint(checkpointId: CheckpointId, reason: CheckpointFailureReason): void;
  /** The first barrier of a multi-channel checkpoint arrived. */
  alignmentStarted(barrier: CheckpointBarrier): void;
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
}

export class IllegalBarrierEvent extends Error {
  constructor(state: string, event: string) {
    super(`barrier handler state ${state} cannot receive ${event}`);
  }
}
