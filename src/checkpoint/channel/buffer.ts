/** A batch of records on a channel: what flows between subtasks and what unaligned checkpoints persist. */
import type { Watermark, WatermarkStatus } from '../../core/watermark.ts';

export interface DataBuffer {
  readonly kind: 'buffer';
  readonly records: unknown[];
  /** Key group per record on keyed edges, else null. */
  readonly keyGroups: Int32Array | null;
  /**
   * Event time per record (NO_TIMESTAMP for a record without one), or null when no record of the
   * buffer has a timestamp: jobs without event time carry nothing.
   */
  readonly timestamps: Float64Array | null;
}

/**
 * What an unaligned checkpoint persists of a channel, in channel order: data buffers and the
 * watermarks and watermark statuses between them (so a restore replays event time in order).
 */
export type InflightElement = DataBuffer | Watermark | WatermarkStatus;
