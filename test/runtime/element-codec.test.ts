import { describe, expect, it } from 'vitest';
import { decodeElement, encodeElement } from '../../src/runtime/network/element-codec.ts';
import { checkpointId } from '../../src/core/ids.ts';
import type { StreamElement } from '../../src/runtime/elements.ts';

const elements: StreamElement[] = [
  { kind: 'buffer', records: ['a', 1, { k: 'x', n: 2n ** 70n }, [1, 2], null, 1.5], keyGroups: Int32Array.of(0, 5, 127, 3, 9, 1), timestamps: null },
  { kind: 'buffer', records: [{ deep: { list: ['é', '✓'] } }], keyGroups: null, timestamps: null },
  { kind: 'buffer', records: [], keyGroups: null, timestamps: null },
  // Event time: timestamps with and without key groups (the f64 column is 8-byte aligned after both).
  {
    kind: 'buffer',
    records: ['x', 'yy', 'zzz'],
    keyGroups: Int32Array.of(1, 2, 3),
    timestamps: Float64Array.of(5, Number.NEGATIVE_INFINITY, 1_700_000_000_123.5),
  },
  { kind: 'buffer', records: [1, 2], keyGroups: null, timestamps: Float64Array.of(-3, 9) },
  { kind: 'watermark', timestampMs: 1_700_000_000_000 },
  { kind: 'watermark', timestampMs: Number.POSITIVE_INFINITY },
  { kind: 'watermark-status', idle: true },
  { kind: 'watermark-status', idle: false },
  {
    kind: 'barrier',
    checkpointId: checkpointId(42),
    timestamp: 1_700_000_000_123,
    options: { kind: 'savepoint', alignment: 'aligned', alignedTimeoutMs: null, isFinal: true },
  },
  // A savepoint's barrier names its directory, for task managers in other threads.
  {
    kind: 'barrier',
    checkpointId: checkpointId(43),
    timestamp: 1_700_000_000_124,
    options: { kind: 'savepoint', alignment: 'aligned', alignedTimeoutMs: null, isFinal: false, targetLocation: '/tmp/sp/savepoint-43-a1b2c3' },
  },
  {
    kind: 'barrier',
    checkpointId: checkpointId(7),
    timestamp: 5,
    options: { kind: 'checkpoint', alignment: 'aligned', alignedTimeoutMs: 250, isFinal: false },
  },
  { kind: 'cancel', checkpointId: checkpointId(9) },
  { kind: 'end-of-data' },
  { kind: 'end-of-partition' },
];

describe('stream element wire format', () => {
  it.each(elements.map((e, i) => [i, e.kind, e] as const))('round-trips element %i (%s) exactly', (_i, _kind, element) => {
    const frame = encodeElement(element);
    expect(frame.byteOffset).toBe(0);
    expect(frame.byteLength).toBe(frame.buffer.byteLength); // a buffer of its own: transferable
    expect(decodeElement(frame, 'c')).toEqual(element);
  });

  it('decodes a frame that sits at an offset inside a larger buffer', () => {
    const frame = encodeElement(elements[0]!);
    const big = new Uint8Array(frame.length + 3);
    big.set(frame, 3);
    expect(decodeElement(big.subarray(3), 'c')).toEqual(elements[0]);
  });

  it('names the channel and what is wrong with a malformed frame', () => {
    const frame = encodeElement(elements[0]!);
    expect(() => decodeElement(frame.subarray(0, frame.length - 4), '1.0->2.1#0')).toThrow(/channel 1\.0->2\.1#0: data frame of \d+ bytes, expected \d+/);
    expect(() => decodeElement(Uint8Array.of(99), 'x')).toThrow('channel x: unknown frame tag 99');
    const bad = frame.slice();
    new DataView(bad.buffer).setUint32(5, 2, true);
    expect(() => decodeElement(bad, 'x')).toThrow('2 key groups for 6 records');
  });
});
