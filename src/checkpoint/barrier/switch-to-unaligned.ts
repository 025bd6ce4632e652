/**
 * The move every unaligned path shares: snapshot now, take barriers already queued on the other
 * channels as received (persisting the buffers ahead of them), record the channels whose barrier is
 * not there yet, release whatever was held back.
 */
import type { CheckpointBarrier } from './barrier.ts';
import type { BarrierHandlerContext, BarrierHandlerState } from './handler-state.ts';
import { CollectingBarriersUnaligned } from './collecting-barriers-unaligned.ts';

export function switchToUnaligned(
  ctx: BarrierHandlerContext,
  barrier: CheckpointBarrier,
  received: Set<number>,
  idle: BarrierHandlerState,
): BarrierHandlerState {
  ctx.triggerCheckpoint(barrier, true);
  for (const ch of ctx.openChannelIndexes()) {
    if (received.has(ch)) continue;
    if (ctx.pullForward(ch, barrier.checkpointId)) received.add(ch);
    else ctx.startRecording(ch);
  }
  ctx.unblockAllChannels();
  if (received.size >= ctx.openChannels) {
    ctx.channelStateComplete(barrier.checkpointId);
    return idle;
  }
  return new CollectingBarriersUnaligned(barrier, received, idle);
}
