/**
 * The wire format of stream elements on channels that cross a thread (and later a process): one
 * frame per element. A data frame carries the records as msgpack and the key groups as raw
 * little-endian int32s after them, so key groups cost a copy, not an encode per record. Event
 * frames (barrier, cancel, end of data, end of partition) are a tag byte and a few fields.
 *
 * Frame layout, version 1:
 *   byte 0        tag (1 data, 2 barrier, 3 cancel, 4 end-of-data, 5 end-of-partition,
 *                 6 watermark, 7 watermark status, 8 data with timestamps)
 *   data:         u32 record count, u32 key-group count (0 or = records), u32 msgpack length,
 *                 msgpack(records), int32 key groups (4-byte aligned from the frame start)
 *   data with timestamps: as data, then one f64 event time per record (8-byte aligned)
 *   watermark:    f64 milliseconds
 *   status:       u8 1 idle, 0 active
 *   barrier:      f64 checkpoint id, f64 timestamp, msgpack(options)
 *   cancel:       f64 checkpoint id
 * msgpackr without records mode: a frame decodes on its own, whatever the receiver saw before,
 * which persisted in-flight data and reordered (overtaking) frames need.
 */
import { Packr } from 'msgpackr';
import { assert } from '../../core/assert.ts';
import { WeirError } from '../../core/errors.ts';
import { checkpointId as toCheckpointId } from '../../core/ids.ts';
import type { CheckpointOptions } from '../../checkpoint/barrier/barrier.ts';
import { END_OF_DATA, END_OF_PARTITION, WATERMARK_ACTIVE, WATERMARK_IDLE, type StreamElement } from '../elements.ts';

const packr = new Packr({ useRecords: false, useBigIntExtension: true, largeBigIntToFloat: false });

const TAG = { data: 1, barrier: 2, cancel: 3, endOfData: 4, endOfPartition: 5, watermark: 6, status: 7, timedData: 8 } as const;
const DATA_HEADER_BYTES = 13;

/** Encodes one element into a new frame (an ArrayBuffer of its own, so it can be transferred). */
export function encodeElement(element: StreamElement): Uint8Array {
  switch (element.kind) {
    case 'buffer': {
      const body = packr.pack(element.records);
      const kgs = element.keyGroups;
      const ts = element.timestamps;
      const kgOffset = align4(DATA_HEADER_BYTES + body.length);
      const kgEnd = kgOffset + (kgs ? kgs.length * 4 : 0);
      const tsOffset = align8(kgEnd);
      const frame = new Uint8Array(ts ? tsOffset + ts.length * 8 : kgEnd);
      const view = new DataView(frame.buffer);
      frame[0] = ts ? TAG.timedData : TAG.data;
      view.setUint32(1, element.records.length, true);
      view.setUint32(5, kgs ? kgs.length : 0, true);
      view.setUint32(9, body.length, true);
      frame.set(body, DATA_HEADER_BYTES);
      if (kgs) new Int32Array(frame.buffer, kgOffset, kgs.length).set(kgs);
      if (ts) new Float64Array(frame.buffer, tsOffset, ts.length).set(ts);
      return frame;
    }
    case 'barrier': {
      const options = packr.pack(element.options);
      const frame = new Uint8Array(17 + options.length);
      const view = new DataView(frame.buffer);
      frame[0] = TAG.barrier;
      view.setFloat64(1, element.checkpointId, true);
      view.setFloat64(9, element.timestamp, true);
      frame.set(options, 17);
      return frame;
    }
    case 'cancel': {
      const frame = new Uint8Array(9);
      frame[0] = TAG.cancel;
      new DataView(frame.buffer).setFloat64(1, element.checkpointId, true);
      return frame;
    }
    case 'watermark': {
      const frame = new Uint8Array(9);
      frame[0] = TAG.watermark;
      new DataView(frame.buffer).setFloat64(1, element.timestampMs, true);
      return frame;
    }
    case 'watermark-status':
      return Uint8Array.of(TAG.status, element.idle ? 1 : 0);
    case 'end-of-data':
      return Uint8Array.of(TAG.endOfData);
    case 'end-of-partition':
      return Uint8Array.of(TAG.endOfPartition);
  }
}

/** Decodes a frame; a malformed one is a WeirError naming the channel. */
export function decodeElement(frame: Uint8Array, channel: string): StreamElement {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  switch (frame[0]) {
    case TAG.data:
    case TAG.timedData: {
      check(frame.length >= DATA_HEADER_BYTES, channel, 'data frame shorter than its header');
      const records = view.getUint32(1, true);
      const kgCount = view.getUint32(5, true);
      const bodyLength = view.getUint32(9, true);
      const kgOffset = align4(DATA_HEADER_BYTES + bodyLength);
      const kgEnd = kgOffset + kgCount * 4;
      const timed = frame[0] === TAG.timedData;
      const expected = timed ? align8(kgEnd) + records * 8 : kgEnd;
      check(kgCount === 0 || kgCount === records, channel, `${kgCount} key groups for ${records} records`);
      check(frame.length === expected, channel, `data frame of ${frame.length} bytes, expected ${expected}`);
      const decoded = packr.unpack(frame.subarray(DATA_HEADER_BYTES, DATA_HEADER_BYTES + bodyLength)) as unknown[];
      check(Array.isArray(decoded) && decoded.length === records, channel, 'records do not match the frame header');
      // Key groups are copied out, so the frame's memory is not pinned by a view into it.
      const keyGroups = kgCount === 0 ? null : new Int32Array(frame.buffer.slice(frame.byteOffset + kgOffset, frame.byteOffset + kgEnd));
      const tsStart = frame.byteOffset + align8(kgEnd);
      const timestamps = timed ? new Float64Array(frame.buffer.slice(tsStart, tsStart + records * 8)) : null;
      return { kind: 'buffer', records: decoded, keyGroups, timestamps };
    }
    case TAG.barrier: {
      check(frame.length > 17, channel, 'barrier frame too short');
      const options = packr.unpack(frame.subarray(17)) as CheckpointOptions;
      return { kind: 'barrier', checkpointId: toCheckpointId(view.getFloat64(1, true)), timestamp: view.getFloat64(9, true), options };
    }
    case TAG.cancel:
      check(frame.length === 9, channel, 'cancel frame of the wrong size');
      return { kind: 'cancel', checkpointId: toCheckpointId(view.getFloat64(1, true)) };
    case TAG.watermark:
      check(frame.length === 9, channel, 'watermark frame of the wrong size');
      return { kind: 'watermark', timestampMs: view.getFloat64(1, true) };
    case TAG.status:
      check(frame.length === 2 && (frame[1] === 0 || frame[1] === 1), channel, 'malformed watermark status frame');
      return frame[1] === 1 ? WATERMARK_IDLE : WATERMARK_ACTIVE;
    case TAG.endOfData:
      return END_OF_DATA;
    case TAG.endOfPartition:
      return END_OF_PARTITION;
    default:
      throw new WeirError('CORRUPT_FRAME', `channel ${channel}: unknown frame tag ${frame[0]}`);
  }
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}

function check(ok: boolean, channel: string, what: string): void {
  if (!ok) throw new WeirError('CORRUPT_FRAME', `channel ${channel}: ${what}`);
}

assert(DATA_HEADER_BYTES === 1 + 4 + 4 + 4, 'data header layout');
