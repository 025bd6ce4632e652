import { describe, expect, it } from 'vitest';
import { LocalChannel } from '../../src/runtime/network/channel.ts';
import { NO_TIMESTAMP } from '../../src/core/watermark.ts';
import type { StreamElement } from '../../src/runtime/elements.ts';
import { RecordWriter } from '../../src/runtime/record-writer.ts';
import { newElementTimestamp } from '../../src/runtime/time/element-timestamp.ts';

function buffers(ch: LocalChannel): Array<{ records: unknown[]; timestamps: number[] | null }> {
  const out: Array<{ records: unknown[]; timestamps: number[] | null }> = [];
  for (let e: StreamElement | undefined = ch.poll(); e !== undefined; e = ch.poll()) {
    if (e.kind === 'buffer') out.push({ records: e.records, timestamps: e.timestamps ? [...e.timestamps] : null });
  }
  return out;
}

describe('record writer event time', () => {
  it('a buffer carries timestamps only once a record of it has one; each channel on its own, untimed again after a flush', () => {
    const a = new LocalChannel('a', 100);
    const b = new LocalChannel('b', 100);
    const ts = newElementTimestamp();
    const writer = new RecordWriter([a, b], { type: 'rebalance' }, 3, 128, 0);
    const timed = new RecordWriter([a, b], { type: 'rebalance' }, 3, 128, 0, ts);
    writer.emit('u'); // no register: always untimed
    writer.flush();
    ts.markTimed(); // a strategy, window or timer of the subtask opened
    // rebalance alternates a, b, a, b, ...
    for (const [record, t] of [
      ['a1', NO_TIMESTAMP],
      ['b1', NO_TIMESTAMP],
      ['a2', 20],
      ['b2', NO_TIMESTAMP],
      ['a3', NO_TIMESTAMP],
      ['b3', NO_TIMESTAMP],
      ['a4', NO_TIMESTAMP],
      ['b4', 40],
    ] as const) {
      ts.current = t;
      timed.emit(record);
    }
    timed.flush();
    expect(buffers(a)).toEqual([
      { records: ['u'], timestamps: null },
      { records: ['a1', 'a2', 'a3'], timestamps: [NO_TIMESTAMP, 20, NO_TIMESTAMP] },
      { records: ['a4'], timestamps: null },
    ]);
    expect(buffers(b)).toEqual([
      { records: ['b1', 'b2', 'b3'], timestamps: null },
      { records: ['b4'], timestamps: [40] },
    ]);
  });

  it('a writer whose register is marked timed in the middle of a buffer gives the earlier records no timestamp', () => {
    const ch = new LocalChannel('c', 100);
    const ts = newElementTimestamp();
    const writer = new RecordWriter([ch], { type: 'forward' }, 4, 128, 0, ts);
    writer.emit('a');
    ts.markTimed();
    ts.current = 30;
    writer.emit('b');
    ts.current = NO_TIMESTAMP;
    writer.emit('c');
    writer.flush();
    expect(buffers(ch)).toEqual([{ records: ['a', 'b', 'c'], timestamps: [NO_TIMESTAMP, 30, NO_TIMESTAMP] }]);
  });
});
