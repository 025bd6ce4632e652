import { describe, expect, it } from 'vitest';
import { CheckpointBarrierHandler } from '../../../src/checkpoint/barrier/barrier-handler.ts';
import type { BarrierHandlerContext } from '../../../src/checkpoint/barrier/handler-state.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import type { CheckpointBarrier } from '../../../src/runtime/elements.ts';

const barrier = (id: number, alignment: 'aligned' | 'at-least-once' = 'aligned'): CheckpointBarrier => ({
  kind: 'barrier',
  checkpointId: checkpointId(id),
  timestamp: 0,
  options: { kind: 'checkpoint', alignment, isFinal: false },
});

function harness(channels: number, mode: 'aligned' | 'at-least-once') {
  const log: string[] = [];
  let open = channels;
  const blocked = new Set<number>();
  const ctx: BarrierHandlerContext = {
    get openChannels() {
      return open;
    },
    blockChannel: (ch) => {
      blocked.add(ch);
      log.push(`block ${ch}`);
    },
    unblockAllChannels: () => {
      blocked.clear();
      log.push('unblock');
    },
    triggerCheckpoint: (b) => log.push(`snapshot ${b.checkpointId}`),
    abortCheckpoint: (id, reason) => log.push(`abort ${id} ${reason}`),
    alignmentStarted: (b) => log.push(`align ${b.checkpointId}`),
  };
  const handler = new CheckpointBarrierHandler(ctx, mode);
  return { handler, log, blocked, close: () => open-- };
}

describe('aligned barrier handling', () => {
  it('holds back each channel that delivered barrier n until all did, then snapshots before releasing', () => {
    const { handler, log, blocked } = harness(3, 'aligned');
    handler.barrierReceived(1, barrier(1));
    expect(handler.stateName).toBe('CollectingBarriers');
    expect([...blocked]).toEqual([1]);
    handler.barrierReceived(0, barrier(1));
    expect([...blocked].sort()).toEqual([0, 1]);
    handler.barrierReceived(2, barrier(1));
    expect(log).toEqual(['align 1', 'block 1', 'block 0', 'block 2', 'snapshot 1', 'unblock']);
    expect(handler.stateName).toBe('WaitingForFirstBarrier');
    expect(blocked.size).toBe(0);
  });

  it('snapshots at once with a single input channel', () => {
    const { handler, log } = harness(1, 'aligned');
    handler.barrierReceived(0, barrier(4));
    expect(log).toEqual(['snapshot 4']);
  });

  it('a newer barrier aborts the older checkpoint and starts collecting the newer one', () => {
    const { handler, log, blocked } = harness(2, 'aligned');
    handler.barrierReceived(0, barrier(1));
    handler.barrierReceived(1, barrier(2));
    expect(log).toEqual(['align 1', 'block 0', 'unblock', 'abort 1 SUBSUMED_BY_NEWER_BARRIER', 'align 2', 'block 1']);
    expect([...blocked]).toEqual([1]);
    // the stale barrier 1 on channel 1 never comes; barrier 2 on channel 0 completes it
    handler.barrierReceived(0, barrier(2));
    expect(log.slice(-2)).toEqual(['snapshot 2', 'unblock']);
  });

  it('drops stale barriers of an aborted checkpoint', () => {
    const { handler, log } = harness(2, 'aligned');
    handler.barrierReceived(0, barrier(1));
    handler.barrierReceived(1, barrier(2));
    handler.barrierReceived(1, barrier(1));
    expect(log.filter((l) => l.startsWith('snapshot'))).toEqual([]);
    expect(handler.pendingCheckpoint).toBe(2);
  });

  it('a cancel marker aborts the pending checkpoint and releases the channels', () => {
    const { handler, log, blocked } = harness(2, 'aligned');
    handler.barrierReceived(0, barrier(3));
    handler.cancelReceived(checkpointId(3));
    expect(log).toEqual(['align 3', 'block 0', 'unblock', 'abort 3 CANCELLED_UPSTREAM']);
    expect(blocked.size).toBe(0);
    handler.barrierReceived(1, barrier(3));
    expect(log.length).toBe(4);
  });

  it('a cancel for a checkpoint not yet seen is passed on once and its barriers are ignored', () => {
    const { handler, log } = harness(2, 'aligned');
    handler.cancelReceived(checkpointId(5));
    handler.barrierReceived(0, barrier(5));
    expect(log).toEqual(['abort 5 CANCELLED_UPSTREAM']);
  });

  it('a channel that closes without its barrier no longer holds alignment', () => {
    const { handler, log, close } = harness(3, 'aligned');
    handler.barrierReceived(0, barrier(1));
    handler.barrierReceived(1, barrier(1));
    close();
    handler.channelClosed(2);
    expect(log.slice(-2)).toEqual(['snapshot 1', 'unblock']);
  });

  it('a channel delivering the same barrier twice is a programmer error', () => {
    const { handler } = harness(3, 'aligned');
    handler.barrierReceived(0, barrier(1));
    expect(() => handler.barrierReceived(0, barrier(1))).toThrow(/twice/);
  });
});

describe('at-least-once barrier handling', () => {
  it('holds nothing back and snapshots when the last barrier arrives', () => {
    const { handler, log, blocked } = harness(3, 'at-least-once');
    handler.barrierReceived(2, barrier(1, 'at-least-once'));
    handler.barrierReceived(0, barrier(1, 'at-least-once'));
    expect(blocked.size).toBe(0);
    expect(handler.stateName).toBe('CollectingBarriersAtLeastOnce');
    handler.barrierReceived(1, barrier(1, 'at-least-once'));
    expect(log).toEqual(['align 1', 'snapshot 1']);
  });
});
