/**
 * Event time's vocabulary, shared by the runtime, the wire codec and persisted channel state:
 * the watermark and watermark-status stream elements and the sentinel times.
 */

/**
 * The timestamp of a record that has none (jobs without event time). `-Infinity`, so it compares
 * below every watermark and stays `===`-comparable (NaN would not).
 */
export const NO_TIMESTAMP = Number.NEGATIVE_INFINITY;

/** The watermark before any was received: nothing is known about event time yet. */
export const MIN_WATERMARK = Number.NEGATIVE_INFINITY;

/** The watermark a source sends when its input ended: every event-time timer and window fires. */
export const MAX_WATERMARK = Number.POSITIVE_INFINITY;

/** No record with a timestamp at or below `timestampMs` is expected any more on this channel. */
export interface Watermark {
  readonly kind: 'watermark';
  readonly timestampMs: number;
}

/**
 * The channel went idle (it sends nothing and must not hold the combined watermark back) or became
 * active again.
 */
export interface WatermarkStatus {
  readonly kind: 'watermark-status';
  readonly idle: boolean;
}

export const WATERMARK_IDLE: WatermarkStatus = { kind: 'watermark-status', idle: true };
export const WATERMARK_ACTIVE: WatermarkStatus = { kind: 'watermark-status', idle: false };
