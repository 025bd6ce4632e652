/**
 * Drives the barrier state machine for one subtask: drops stale barriers, aborts an older
 * checkpoint when a newer barrier or a cancel marker arrives, starts alignment timeouts when a
 * barrier is announced, and delegates the rest to the state.
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointBarrier } from './barrier.ts';
import type { BarrierHandlerContext, BarrierHandlerState } from './handler-state.ts';
import { WaitingForFirstBarrier } from './waiting-for-first-barrier.ts';

export class CheckpointBarrierHandler {
  private state: BarrierHandlerState;
  /** Barriers and cancels of checkpoints up to this id are finished with here. */
  private latestSeen = 0;
  /** The announced barrier whose alignment timeout is running. */
  private timed: CheckpointBarrier | null = null;

  constructor(private readonly ctx: BarrierHandlerContext) {
    this.state = new WaitingForFirstBarrier();
  }

  get stateName(): string {
    return this.state.name;
  }

  get pendingCheckpoint(): CheckpointId | null {
    return this.state.pendingCheckpoint;
  }

  barrierReceived(channel: number, barrier: CheckpointBarrier): void {
    const id = barrier.checkpointId;
    const pending = this.state.pendingCheckpoint;
    if (pending !== null && id > pending) {
      this.state = this.state.abort(this.ctx, 'SUBSUMED_BY_NEWER_BARRIER');
    }
    const now = this.state.pendingCheckpoint;
    if (now !== null ? id < now : id <= this.latestSeen) return; // stale: aborted or done here
    this.latestSeen = Math.max(this.latestSeen, id);
    this.state = this.state.barrierReceived(this.ctx, channel, barrier);
  }

  /** A barrier was queued on a channel, not yet reached: start its alignment timeout. */
  barrierAnnounced(barrier: CheckpointBarrier): void {
    const ms = barrier.options.alignedTimeoutMs;
    if (ms === null || barrier.options.alignment !== 'aligned') return;
    if (barrier.checkpointId <= this.latestSeen && this.state.pendingCheckpoint !== barrier.checkpointId) return;
    if (this.timed !== null && this.timed.checkpointId >= barrier.checkpointId) return;
    this.timed = barrier;
    this.ctx.scheduleAlignmentTimeout(barrier.checkpointId, ms);
  }

  alignmentTimedOut(checkpointId: CheckpointId): void {
    const barrier = this.timed;
    if (barrier === null || barrier.checkpointId !== checkpointId) return;
    this.timed = null;
    const pending = this.state.pendingCheckpoint;
    if (pending === checkpointId) {
      this.state = this.state.alignmentTimedOut(this.ctx, barrier);
    } else if (pending === null && checkpointId > this.latestSeen) {
      this.latestSeen = checkpointId;
      this.state = this.state.alignmentTimedOut(this.ctx, barrier);
    }
  }

  cancelReceived(checkpointId: CheckpointId): void {
    const pending = this.state.pendingCheckpoint;
    if (pending !== null && checkpointId >= pending) {
      this.state = this.state.abort(this.ctx, 'CANCELLED_UPSTREAM');
    }
    if (checkpointId > this.latestSeen) {
      this.latestSeen = checkpointId;
      this.ctx.abortCheckpoint(checkpointId, 'CANCELLED_UPSTREAM');
    }
  }

  channelClosed(channel: number): void {
    this.state = this.state.channelClosed(this.ctx, channel);
  }

  /** The task aborts checkpoint n for its own reasons (the coordinator said so). */
  abortPending(checkpointId: CheckpointId): void {
    if (this.state.pendingCheckpoint === checkpointId) {
      this.state = this.state.abort(this.ctx, 'CANCELLED_UPSTREAM');
    }
    this.latestSeen = Math.max(this.latestSeen, checkpointId);
  }
}
