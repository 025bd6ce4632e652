/**
 * Event time of the Nexmark stream, as nexmark-flink declares it: each event's `dateTime`, with
 * watermarks trailing the newest time seen by 4 seconds. Within a source subtask event times only
 * increase, so nothing is late unless a rescale gives a subtask several splits at once.
 */
import { type DataStream, type StreamEnvironment, WatermarkStrategy } from 'weir-stream';
import { type NexmarkEvent, type NexmarkOptions, NexmarkSource } from 'weir-stream/nexmark';

/** How far (ms) watermarks trail the newest event time. */
export const OUT_OF_ORDERNESS_MS = 4_000;

/** The Nexmark source with event time: `dateTime`, watermarks 4 s behind. */
export function nexmarkStream(env: StreamEnvironment, options: NexmarkOptions): DataStream<NexmarkEvent> {
  const watermarks = WatermarkStrategy.forBoundedOutOfOrderness<NexmarkEvent>(OUT_OF_ORDERNESS_MS).withTimestampAssigner((e) => e.dateTime);
  return env.fromSource(new NexmarkSource(options), 'nexmark', { watermarks }).uid('nexmark');
}

/** Start of the tumbling window of `sizeMs` holding time `t` (ms since 1970, t >= 0). */
export function windowStart(t: number, sizeMs: number): number {
  return t - (t % sizeMs);
}
