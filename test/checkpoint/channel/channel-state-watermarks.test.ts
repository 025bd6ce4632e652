import { describe, expect, it } from 'vitest';
import { decodeBuffers, writeChannelState } from '../../../src/checkpoint/channel/channel-state.ts';
import { InflightLog } from '../../../src/checkpoint/channel/inflight-log.ts';
import type { InflightElement } from '../../../src/checkpoint/channel/buffer.ts';
import { checkpointId, jobId } from '../../../src/core/ids.ts';
import { LocalChannel } from '../../../src/runtime/network/channel.ts';
import { encodeValue } from '../../../src/state/codec.ts';
import { MemoryCheckpointStorage } from '../../../src/storage/memory-storage.ts';

const timed = (records: number[]): InflightElement => ({
  kind: 'buffer',
  records,
  keyGroups: Int32Array.from(records.map((r) => r % 5)),
  timestamps: Float64Array.from(records.map((r) => r * 100)),
});

describe('channel state keeps watermarks in order with the data (format v2)', () => {
  it('an unaligned barrier overtakes buffers, watermarks and statuses; the persisted channel state replays them in the same order', async () => {
    const channel = new LocalChannel('c', 8);
    const queued: InflightElement[] = [
      timed([1, 2]),
      { kind: 'watermark', timestampMs: 150 },
      { kind: 'watermark-status', idle: true },
      { kind: 'watermark-status', idle: false },
      timed([3]),
      { kind: 'watermark', timestampMs: Number.POSITIVE_INFINITY },
    ];
    for (const e of queued) channel.push(e);
    channel.push({ kind: 'end-of-data' });
    const overtaken = channel.overtakeWith({
      kind: 'barrier',
      checkpointId: checkpointId(3),
      timestamp: 0,
      options: { kind: 'checkpoint', alignment: 'unaligned', alignedTimeoutMs: null, isFinal: false },
    });
    expect(overtaken).toEqual(queued); // end-of-data is not channel state
    const log = new InflightLog(checkpointId(3), 0);
    log.output.push({ gate: 0, channel: 0, buffers: overtaken });
    log.complete();
    const storage = new MemoryCheckpointStorage(jobId('j'), { inlineThresholdBytes: 0 });
    const { handles } = await writeChannelState(log, storage.streamFactory(checkpointId(3)), 't');
    expect(handles.length).toBe(1);
    expect(decodeBuffers(await storage.readState(handles[0]!.stream), 'x')).toEqual(queued);
  });

  it('still reads format v1 (buffers only, no timestamps) and names the file of a malformed element', () => {
    const v1 = encodeValue([
      [
        [1, 2],
        [0, 1],
      ],
      [['a'], null],
    ]);
    expect(decodeBuffers(v1, 'old')).toEqual([
      { kind: 'buffer', records: [1, 2], keyGroups: Int32Array.of(0, 1), timestamps: null },
      { kind: 'buffer', records: ['a'], keyGroups: null, timestamps: null },
    ]);
    expect(() => decodeBuffers(encodeValue({ v: 2, e: [['w', 'soon']] }), 'chk-3/channel-x')).toThrow(/chk-3\/channel-x.*watermark/);
    expect(() => decodeBuffers(encodeValue({ v: 2, e: [['b', [1, 2], null, [5]]] }), 'f')).toThrow(/columns differ/);
    expect(() => decodeBuffers(encodeValue({ v: 9 }), 'f')).toThrow(/neither format v1 nor v2/);
  });
});
