/**
 * No checkpoint in progress. The first barrier starts one as its options say: aligned (the channel
 * is held back), at-least-once (nothing held), or unaligned (snapshot at once). An aligned barrier
 * with a timeout that was announced but not reached switches to unaligned when the timeout fires.
 */
import type { CheckpointBarrier } from './barrier.ts';
import type { BarrierHandlerContext, BarrierHandlerState } from './handler-state.ts';
import { IllegalBarrierEvent } from './handler-state.ts';
import { CollectingBarriers } from './collecting-barriers.ts';
import { switchToUnaligned } from './switch-to-unaligned.ts';

export class WaitingForFirstBarrier implements BarrierHandlerState {
  readonly name = 'WaitingForFirstBarrier';
  readonly pendingCheckpoint = null;

  barrierReceived(ctx: BarrierHandlerContext, channel: number, barrier: CheckpointBarrier): BarrierHandlerState {
    const unaligned = barrier.options.alignment === 'unaligned';
    if (ctx.openChannels <= 1) {
      ctx.triggerCheckpoint(barrier, unaligned);
      if (unaligned) ctx.channelStateComplete(barrier.checkpointId);
      return this;
    }
    ctx.alignmentStarted(barrier);
    if (unaligned) return switchToUnaligned(ctx, barrier, new Set([channel]), this);
    const hold = barrier.options.alignment === 'aligned';
    if (hold) ctx.blockChannel(channel);
    return new CollectingBarriers(barrier, hold, new Set([channel]), this);
  }

  channelClosed(): BarrierHandlerState {
    return this;
  }

  abort(): BarrierHandlerState {
    throw new IllegalBarrierEvent(this.name, 'abort');
  }

  alignmentTimedOut(ctx: BarrierHandlerContext, barrier: CheckpointBarrier): BarrierHandlerState {
    // Announced but stuck behind queued data on every channel: overtake it now.
    ctx.alignmentStarted(barrier);
    return switchToUnaligned(ctx, barrier, new Set(), this);
  }
}
