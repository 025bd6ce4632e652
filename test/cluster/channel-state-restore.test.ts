import { describe, expect, it } from 'vitest';
import { InflightLog } from '../../src/checkpoint/channel/inflight-log.ts';
import { writeChannelState } from '../../src/checkpoint/channel/channel-state.ts';
import type { OperatorStateMeta } from '../../src/checkpoint/metadata/metadata.ts';
import { restoreChannelState } from '../../src/cluster/task-manager/deployment.ts';
import { checkpointId, jobId } from '../../src/core/ids.ts';
import { LocalChannel } from '../../src/runtime/network/channel.ts';
import type { DataBuffer } from '../../src/checkpoint/channel/buffer.ts';
import { MemoryCheckpointStorage } from '../../src/storage/memory-storage.ts';

const buf = (records: number[], keyed = false): DataBuffer => ({
  kind: 'buffer',
  records,
  keyGroups: keyed ? Int32Array.from(records.map((r) => r % 7)) : null,
  timestamps: null,
});

describe('channel state restore', () => {
  it('puts back the consumer-recorded buffers, then the producer-overtaken ones, each in order, before new data', async () => {
    const storage = new MemoryCheckpointStorage(jobId('j'), { inlineThresholdBytes: 0 });
    const streams = storage.streamFactory(checkpointId(4));
    // Upstream subtask 0 of 'up' overtook [5,6] and [7] on its writer 0, channel 1.
    const upLog = new InflightLog(checkpointId(4), 0);
    upLog.output.push({ gate: 0, channel: 1, buffers: [buf([5, 6], true), buf([7], true)] });
    upLog.complete();
    // Downstream subtask 1 of 'down' recorded [1,2] and [3,4] on its input channel 0 (from up#0).
    const downLog = new InflightLog(checkpointId(4), 2);
    downLog.input[0]!.push(buf([1, 2], true), buf([3, 4], true));
    downLog.complete();
    const up = await writeChannelState(upLog, streams, 'up-0');
    const down = await writeChannelState(downLog, streams, 'down-1');
    const meta = (uid: string, subtask: number, channels: typeof up.handles): OperatorStateMeta => ({
      uid,
      name: uid,
      parallelism: 2,
      maxParallelism: 128,
      subtasks: [{ subtask, keyed: [], operator: null, channels }],
    });
    const restored = new Map([
      ['up', meta('up', 0, up.handles)],
      ['down', meta('down', 1, down.handles)],
    ]);
    const shared = new LocalChannel('up0->down1', 2);
    const other = new LocalChannel('up1->down1', 2);
    await restoreChannelState(
      [
        { headUid: 'up', subtask: 0, inputs: [], outputs: [[new LocalChannel('up0->down0', 2), shared]] },
        { headUid: 'down', subtask: 1, inputs: [shared, other], outputs: [] },
      ],
      restored,
      storage,
    );
    shared.push(buf([8]));
    const seen: number[] = [];
    const kgs: number[] = [];
    for (let e = shared.poll(); e; e = shared.poll()) {
      if (e.kind === 'buffer') {
        seen.push(...(e.records as number[]));
        if (e.keyGroups) kgs.push(...e.keyGroups);
      }
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(kgs).toEqual([1, 2, 3, 4, 5, 6, 0]);
    expect(other.size).toBe(0);
  });
});
