/**
 * Wall-clock time with the resolution of the monotonic clock: the system's wall clock moves in whole
 * milliseconds, too coarse to order the barriers of one checkpoint, which arrive microseconds
 * apart. The offset between a clock's wall time and its monotonic time is taken once per clock, so
 * every reading from that clock (every task of a thread, the job master) shares it.
 */
import type { Clock } from './time.ts';

const offsets = new WeakMap<Clock, number>();

/** Wall-clock milliseconds since 1970, with sub-millisecond steps, from `clock`. */
export function preciseWallNow(clock: Clock): number {
  let offset = offsets.get(clock);
  if (offset === undefined) {
    offset = clock.wallNow() - clock.now();
    offsets.set(clock, offset);
  }
  return clock.now() + offset;
}
