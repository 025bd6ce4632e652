/**
 * Unaligned: the snapshot is taken; channels that have not delivered the barrier yet are recorded
 * (their buffers are in-flight data of the checkpoint) until they do.
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointBarrier } from './barrier.ts';
import type { CheckpointFailureReason } from '../failure-reason.ts';
import type { BarrierHandlerContext, BarrierHandlerState } from './handler-state.ts';

export class CollectingBarriersUnaligned implements BarrierHandlerState {
  readonly name = 'CollectingBarriersUnaligned';
  constructor(
    private readonly barrier: CheckpointBarrier,
    private readonly received: Set<number>,
    private readonly idle: BarrierHandlerState,
  ) {}

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
    ctx.stopRecording(channel);
    return this.completeIfAll(ctx);
  }

  channelClosed(ctx: BarrierHandlerContext, channel: number): BarrierHandlerState {
    ctx.stopRecording(channel);
    this.received.delete(channel);
    return this.completeIfAll(ctx);
  }

  abort(ctx: BarrierHandlerContext, reason: CheckpointFailureReason): BarrierHandlerState {
    for (const ch of ctx.openChannelIndexes()) ctx.stopRecording(ch);
    ctx.abortCheckpoint(this.barrier.checkpointId, reason);
    return this.idle;
  }

  alignmentTimedOut(): BarrierHandlerState {
    return this; // already unaligned
  }

  private completeIfAll(ctx: BarrierHandlerContext): BarrierHandlerState {
    if (this.received.size < ctx.openChannels) return this;
    ctx.channelStateComplete(this.barrier.checkpointId);
    return this.idle;
  }
}
