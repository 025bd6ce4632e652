import { describe, expect, it } from 'vitest';
import { LocalChannel } from '../../src/runtime/network/channel.ts';
import { RecordWriter } from '../../src/runtime/record-writer.ts';
import type { JobMaster } from '../../src/cluster/job-master/job-master.ts';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';

describe('credit-based channels', () => {
  it('a full channel has no credit; taking a buffer gives credit back and wakes the producer', () => {
    const ch = new LocalChannel('a->b', 2);
    let woken = 0;
    ch.setProducer({ onAvailable: () => woken++ });
    const writer = new RecordWriter([ch], { type: 'forward' }, 3, 128, 0);
    for (let i = 0; i < 6; i++) writer.emit(i);
    expect(ch.bufferedBuffers).toBe(2);
    expect(writer.hasCredit()).toBe(false);
    ch.poll();
    expect(woken).toBe(1);
    expect(writer.hasCredit()).toBe(true);
  });

  it('events take no credit and keep their place behind the records before them', () => {
    const ch = new LocalChannel('a->b', 1);
    const writer = new RecordWriter([ch], { type: 'forward' }, 10, 128, 0);
    writer.emit('x');
    writer.broadcastEvent({ kind: 'end-of-data' });
    expect(ch.snapshotQueue().map((e) => e.kind)).toEqual(['buffer', 'end-of-data']);
    expect(ch.bufferedBuffers).toBe(1);
  });

  it('a slow operator holds its producers back: queued buffers stay bounded while the job runs', async () => {
    const env = StreamEnvironment.create({ parallelism: 1, bufferRecords: 16, channelCapacity: 2 });
    let maxQueued = 0;
    let channels: LocalChannel[] = [];
    env
      .generate({ count: 20_000 }, (i) => {
        for (const c of channels) maxQueued = Math.max(maxQueued, c.bufferedBuffers);
        return i;
      })
      .disableChaining()
      .map((i) => {
        const end = performance.now() + 0.01;
        while (performance.now() < end) {
          // slow
        }
        return i;
      })
      .disableChaining()
      .sinkTo(new CollectSink());
    let master: JobMaster | null = null;
    const result = await env.execute('bounded', {
      onJobMaster: (m) => (master = m),
      onEvent: (e) => {
        // Once the attempt runs, reach its channels through its tasks' input gates.
        if (e.type !== 'running' || master === null) return;
        channels = master.tasks.flatMap((t) =>
          ((t as unknown as { cfg: { input: { channels: Array<{ channel: LocalChannel }> } | null } }).cfg.input?.channels ?? []).map((s) => s.channel),
        );
      },
    });
    expect(result.status).toBe('FINISHED');
    expect(channels.length).toBeGreaterThan(0);
    // Capacity 2, plus what one step of the producer may flush past it (one buffer per channel).
    expect(maxQueued).toBeLessThanOrEqual(3);
    expect(maxQueued).toBeGreaterThanOrEqual(2);
  });
});
