import { describe, expect, it } from 'vitest';
import { CheckpointBarrierHandler } from '../../../src/checkpoint/barrier/barrier-handler.ts';
import type { BarrierHandlerContext } from '../../../src/checkpoint/barrier/handler-state.ts';
import { checkpointId } from '../../../src/core/ids.ts';
import type { CheckpointBarrier } from '../../../src/checkpoint/barrier/barrier.ts';

const barrier = (id: number, alignment: 'aligned' | 'at-least-once' | 'unaligned' = 'aligned', alignedTimeoutMs: number | null = null): CheckpointBarrier => ({
  kind: 'barrier',
  checkpointId: checkpointId(id),
  timestamp: 0,
  options: { kind: 'checkpoint', alignment, alignedTimeoutMs, isFinal: false },
});

function harness(channels: number, _mode?: string, queued: number[] = []) {
  const log: string[] = [];
  let open = channels;
  const blocked = new Set<number>();
  const timers: Array<{ id: number; ms: number }> = [];
  const ctx: BarrierHandlerContext = {
    get openChannels() {
      return open;
    },
    openChannelIndexes: () => Array.from({ length: open }, (_, i) => i),
    startRecording: (ch) => log.push(`record ${ch}`),
    stopRecording: (ch) => log.push(`stop ${ch}`),
    pullForward: (ch) => {
      if (!queued.includes(ch)) return false;
      log.push(`pull ${ch}`);
      return true;
    },
    channelStateComplete: (id) => log.push(`inflight ${id} complete`),
    scheduleAlignmentTimeout: (id, ms) => timers.push({ id, ms }),
    blockChannel: (ch) => {
      blocked.add(ch);
      log.push(`block ${ch}`);
    },
    unblockAllChannels: () => {
      blocked.clear();
      log.push('unblock');
    },
    triggerCheckpoint: (b, unaligned) => log.push(`${unaligned ? 'unaligned ' : ''}snapshot ${b.checkpointId}`),
    abortCheckpoint: (id, reason) => log.push(`abort ${id} ${reason}`),
    alignmentStarted: (b) => log.push(`align ${b.checkpointId}`),
  };
  const handler = new CheckpointBarrierHandler(ctx);
  return { handler, log, blocked, timers, close: () => open-- };
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

describe('unaligned barrier handling', () => {
  it('snapshots on the first barrier, records the channels still without it, completes when all arrive', () => {
    const { handler, log, blocked } = harness(3, undefined, [2]);
    handler.barrierReceived(1, barrier(7, 'unaligned'));
    expect(log).toEqual(['align 7', 'unaligned snapshot 7', 'record 0', 'pull 2', 'unblock']);
    expect(handler.stateName).toBe('CollectingBarriersUnaligned');
    expect(blocked.size).toBe(0);
    handler.barrierReceived(0, barrier(7, 'unaligned'));
    expect(log.slice(-2)).toEqual(['stop 0', 'inflight 7 complete']);
    expect(handler.stateName).toBe('WaitingForFirstBarrier');
  });

  it('an abort stops recording and declines', () => {
    const { handler, log } = harness(2);
    handler.barrierReceived(0, barrier(3, 'unaligned'));
    handler.cancelReceived(checkpointId(3));
    expect(log.slice(-3)).toEqual(['stop 0', 'stop 1', 'abort 3 CANCELLED_UPSTREAM']);
  });
});

describe('aligned checkpoints with a timeout', () => {
  it('start the timeout when a barrier is announced, and switch to unaligned when it fires', () => {
    const { handler, log, blocked, timers } = harness(3, undefined, [2]);
    const b = barrier(5, 'aligned', 100);
    handler.barrierAnnounced(b);
    handler.barrierAnnounced(b);
    expect(timers).toEqual([{ id: 5, ms: 100 }]);
    handler.barrierReceived(0, b);
    expect([...blocked]).toEqual([0]);
    handler.alignmentTimedOut(checkpointId(5));
    expect(log).toEqual(['align 5', 'block 0', 'unaligned snapshot 5', 'record 1', 'pull 2', 'unblock']);
    expect(blocked.size).toBe(0);
    handler.barrierReceived(1, b);
    expect(log.slice(-2)).toEqual(['stop 1', 'inflight 5 complete']);
  });

  it('a barrier stuck in every queue is pulled forward when the timeout fires before any arrives', () => {
    const { handler, log } = harness(2, undefined, [0, 1]);
    const b = barrier(9, 'aligned', 50);
    handler.barrierAnnounced(b);
    handler.alignmentTimedOut(checkpointId(9));
    expect(log).toEqual(['align 9', 'unaligned snapshot 9', 'pull 0', 'pull 1', 'unblock', 'inflight 9 complete']);
    expect(handler.stateName).toBe('WaitingForFirstBarrier');
  });

  it('a timeout after the alignment completed changes nothing', () => {
    const { handler, log } = harness(2);
    const b = barrier(4, 'aligned', 50);
    handler.barrierAnnounced(b);
    handler.barrierReceived(0, b);
    handler.barrierReceived(1, b);
    const before = [...log];
    handler.alignmentTimedOut(checkpointId(4));
    expect(log).toEqual(before);
  });
});
