/**
 * Barriers of one checkpoint arrived on some channels. Aligned: those channels are held back until
 * every open channel delivered it; at-least-once: nothing is held, the snapshot waits for the last.
 * An aligned checkpoint with a timeout switches to unaligned when the timeout fires first.
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointBarrier } from './barrier.ts';
import type { CheckpointFailureReason } from '../failure-reason.ts';
import type { BarrierHandlerContext, BarrierHandlerState } from './handler-state.ts';
import { switchToUnaligned } from './switch-to-unaligned.ts';

export class CollectingBarriers implements BarrierHandlerState {
  readonly name: string;
  constructor(
    private readonly barrier: CheckpointBarrier,
    private readonly holdChannels: boolean,
    private readonly received: Set<number>,
    private readonly idle: BarrierHandlerState,
  ) {
    this.name = holdChannels ? 'CollectingBarriers' : 'CollectingBarriersAtLeastOnce';
  }

  get pendingCheckpoint(): CheckpointId {
    return this.barrier.checkpointId;
  }

  barrierReceived(ctx: BarrierHandlerContext, channel: number, barrier: CheckpointBarrier): BarrierHandlerState {
    assert(
      barrier.checkpointId === this.barrier.checkpointId,
      () => `${this.name}: barrier ${barrier.checkpointId} while collecting ${this.barrier.checkpointId}`,
    );
    assert(!this.received.has(channel), () => `${this.name}: channel ${channel} delivered barrier ${barrier.checkpointId} twice`);
    this.received.add(channel);
    if (this.holdChannels) ctx.blockChannel(channel);
    return this.completeIfAll(ctx);
  }

  channelClosed(ctx: BarrierHandlerContext, channel: number): BarrierHandlerState {
    this.received.delete(channel);
    return this.completeIfAll(ctx);
  }

  abort(ctx: BarrierHandlerContext, reason: CheckpointFailureReason): BarrierHandlerState {
    if (this.holdChannels) ctx.unblockAllChannels();
    ctx.abortCheckpoint(this.barrier.checkpointId, reason);
    return this.idle;
  }

  alignmentTimedOut(ctx: BarrierHandlerContext, barrier: CheckpointBarrier): BarrierHandlerState {
    if (!this.holdChannels || barrier.checkpointId !== this.barrier.checkpointId) return this;
    return switchToUnaligned(ctx, this.barrier, this.received, this.idle);
  }

  private completeIfAll(ctx: BarrierHandlerContext): BarrierHandlerState {
    if (this.received.size < ctx.openChannels) return this;
    ctx.triggerCheckpoint(this.barrier, false);
    if (this.holdChannels) ctx.unblockAllChannels();
    return this.idle;
  }
}
