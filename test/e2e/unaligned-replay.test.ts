import { describe, expect, it } from 'vitest';
import { CollectSink, InjectedFault, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../../src/runtime/faults.ts';
import { heldGenerate } from '../support/held-source.ts';

function spin(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end) {
    // slow operator: queues fill, barriers overtake them
  }
}

/** Crashes the slow operator once, right after a checkpoint that persisted in-flight data completed. */
class CrashAfterInflightCheckpoint implements FaultInjector {
  armedAt: number | null = null;
  fired = false;
  check(site: FaultSite, ctx: FaultContext): void {
    if (this.armedAt === null || this.fired || site !== 'process' || ctx.attempt !== 0 || !ctx.vertex.startsWith('map')) return;
    this.fired = true;
    throw new InjectedFault('process');
  }
}

describe('recovery from an unaligned checkpoint', () => {
  it('replays the persisted in-flight buffers before new data, in their original order', async () => {
    const N = 20_000;
    const env = StreamEnvironment.create({
      parallelism: 1,
      checkpointing: { intervalMs: 5, unaligned: true },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 1 },
      bufferRecords: 16,
      channelCapacity: 8,
    });
    const sink = new CollectSink<number>();
    // Paced by checkpoints (5,000 records between two) behind a map slow enough (20 µs a record) that its input
    // queue is full when a barrier arrives, on a quiet machine too (at 2,000 and 8 µs the queue drained first);
    // input is left after the armed checkpoint however loaded the machine.
    heldGenerate(env, { count: N }, (i) => i, { recordsPerCheckpoint: 5_000 })
      .uid('numbers')
      .map((i) => {
        spin(20);
        return i;
      })
      .uid('slow')
      .name('map')
      .disableChaining()
      .rebalance()
      .map((i) => i)
      .name('tail')
      .disableChaining()
      .sinkTo(sink)
      .uid('sink');
    const faults = new CrashAfterInflightCheckpoint();
    const events: JobEvent[] = [];
    const result = await env.execute('replay', {
      faults,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'checkpoint-completed' && faults.armedAt === null && e.stats.subtasks.some((s) => s.metrics.channelStateBytes > 0)) {
          faults.armedAt = e.stats.checkpointId;
        }
      },
    });
    expect(faults.fired).toBe(true);
    expect(result.restarts).toBe(1);
    const restored = events.find((e) => e.type === 'running' && e.restoredFrom !== null);
    expect(restored?.type === 'running' && restored.restoredFrom).toBeGreaterThanOrEqual(faults.armedAt!);
    // One path, FIFO everywhere: the committed output is every number once, in order.
    const out = sink.results();
    expect(out.length).toBe(N);
    for (let i = 0; i < N; i++) if (out[i] !== i) expect(out.slice(Math.max(0, i - 3), i + 3)).toEqual([...Array(6)].map((_, k) => Math.max(0, i - 3) + k));
  });
});
