/**
 * What flows on a channel: buffers of records and in-band events. Buffers carry the key group of
 * each record when the edge is keyed, so the receiving keyed operator does not hash again.
 */
import type { CheckpointId } from '../core/ids.ts';

export interface CheckpointOptions {
  /** 'checkpoint' or 'savepoint' (savepoints are always aligned). */
  readonly kind: 'checkpoint' | 'savepoint';
  /** Aligned exactly-once, unaligned (the barrier overtakes in-flight data), or at-least-once (no holding back). */
  readonly alignment: 'aligned' | 'at-least-once' | 'unaligned';
  /** For aligned barriers of an unaligned-capable job: switch to unaligned after this long (null: never). */
  readonly alignedTimeoutMs: number | null;
  /** The checkpoint taken after every source ended; its completion lets the job finish. */
  readonly isFinal: boolean;
}

export interface CheckpointBarrier {
  readonly kind: 'barrier';
  readonly checkpointId: CheckpointId;
  /** Wall-clock ms when the coordinator triggered the checkpoint. */
  readonly timestamp: number;
  readonly options: CheckpointOptions;
}

export interface DataBuffer {
  readonly kind: 'buffer';
  readonly records: unknown[];
  /** Key group per record on keyed edges, else null. */
  readonly keyGroups: Int32Array | null;
}

/** Tells downstream that checkpoint n was aborted upstream, so it stops waiting for its barriers. */
export interface CancelCheckpointMarker {
  readonly kind: 'cancel';
  readonly checkpointId: CheckpointId;
}

/** No more records will follow on this channel; barriers still may (for the final checkpoint). */
export interface EndOfData {
  readonly kind: 'end-of-data';
}

/** Nothing at all follows on this channel: the upstream subtask finished. */
export interface EndOfPartition {
  readonly kind: 'end-of-partition';
}

export type StreamEvent = CheckpointBarrier | CancelCheckpointMarker | EndOfData | EndOfPartition;
export type StreamElement = DataBuffer | StreamEvent;

export const END_OF_DATA: EndOfData = { kind: 'end-of-data' };
export const END_OF_PARTITION: EndOfPartition = { kind: 'end-of-partition' };
