/**
 * What flows on a channel: buffers of records and in-band events. Buffers carry the key group of
 * each record when the edge is keyed, so the receiving keyed operator does not hash again, and the
 * event time of each record when any has one. Watermarks travel as events, ordered with the data.
 */
import type { CancelCheckpointMarker, CheckpointBarrier } from '../checkpoint/barrier/barrier.ts';
import type { DataBuffer } from '../checkpoint/channel/buffer.ts';
import type { Watermark, WatermarkStatus } from '../core/watermark.ts';

export type { Watermark, WatermarkStatus } from '../core/watermark.ts';
export { MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP, WATERMARK_ACTIVE, WATERMARK_IDLE } from '../core/watermark.ts';

/** No more records will follow on this channel; barriers still may (for the final checkpoint). */
export interface EndOfData {
  readonly kind: 'end-of-data';
}

/** Nothing at all follows on this channel: the upstream subtask finished. */
export interface EndOfPartition {
  readonly kind: 'end-of-partition';
}

export type StreamEvent = CheckpointBarrier | CancelCheckpointMarker | EndOfData | EndOfPartition | Watermark | WatermarkStatus;
export type StreamElement = DataBuffer | StreamEvent;

export const END_OF_DATA: EndOfData = { kind: 'end-of-data' };
export const END_OF_PARTITION: EndOfPartition = { kind: 'end-of-partition' };
