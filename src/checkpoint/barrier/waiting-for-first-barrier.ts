/** No checkpoint in progress: the first barrier starts one (aligned: the channel is held back). */
import type { CheckpointBarrier } from '../../runtime/elements.ts';
import type { BarrierHandlerContext, BarrierHandlerState } from './handler-state.ts';
import { IllegalBarrierEvent } from './handler-state.ts';
import { CollectingBarriers } from './collecting-barriers.ts';

export class WaitingForFirstBarrier implements BarrierHandlerState {
  readonly name = 'WaitingForFirstBarrier';
  readonly pendingCheckpoint = null;
  constructor(private readonly holdChannels: boolean) {}

  barrierReceived(ctx: BarrierHandlerContext, channel: number, barrier: CheckpointBarrier): BarrierHandlerState {
    if (ctx.openChannels <= 1) {
      ctx.triggerCheckpoint(barrier);
      return this;
    }
    ctx.alignmentStarted(barrier);
    if (this.holdChannels) ctx.blockChannel(channel);
    return new CollectingBarriers(barrier, this.holdChannels, new Set([channel]), this);
  }

  channelClosed(): BarrierHandlerState {
    return this;
  }

  abort(): BarrierHandlerState {
    throw new IllegalBarrierEvent(this.name, 'abort');
  }
}
