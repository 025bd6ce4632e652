/**
 * How far a task manager's wall clock is from the job master's, estimated from heartbeat round
 * trips as NTP does: a heartbeat sent at `sentMs` and answered at `receivedMs` (both on the job
 * master's clock) carries the task manager's clock when it answered (`answeredAtMs`); the answer
 * was given somewhere between the two, so the offset is `answeredAtMs - (sentMs + receivedMs) / 2`
 * within half the round trip. Of the last few samples the one with the smallest round trip wins:
 * a round trip made long by a busy thread or a queue is the least certain (the minimum filter of
 * NTP's clock filter). Pure: the job master feeds it, nothing here reads a clock.
 */
import type { CheckpointAck } from '../../checkpoint/ack.ts';

/** One heartbeat round trip. */
export interface RoundTrip {
  /** Job master's wall-clock ms the heartbeat was sent. */
  readonly sentMs: number;
  /** Job master's wall-clock ms its answer arrived. */
  readonly receivedMs: number;
  /** Task manager's wall-clock ms it answered (the answer's `at`). */
  readonly answeredAtMs: number;
}

/** A task manager's clock against the job master's. */
export interface ClockOffset {
  /** Task manager's clock minus the job master's, ms: subtract it from a task manager's stamp to read it on the job master's clock. */
  readonly offsetMs: number;
  /** Half the round trip it was measured with: the true offset is within `offsetMs ± uncertaintyMs`. */
  readonly uncertaintyMs: number;
  /** The round trip of the sample it comes from, ms. */
  readonly roundTripMs: number;
  /** Job master's wall-clock ms that sample's answer arrived. */
  readonly measuredAtMs: number;
}

/** Samples the minimum filter looks at: with the default 1 s heartbeat, the last 16 s. */
export const CLOCK_SAMPLES_KEPT = 16;

/** The offset one round trip gives; null for a round trip that went backwards (not a measurement). */
export function offsetOf(trip: RoundTrip): ClockOffset | null {
  const roundTripMs = trip.receivedMs - trip.sentMs;
  if (!(roundTripMs >= 0) || !Number.isFinite(trip.answeredAtMs)) return null;
  return {
    offsetMs: trip.answeredAtMs - (trip.sentMs + trip.receivedMs) / 2,
    uncertaintyMs: roundTripMs / 2,
    roundTripMs,
    measuredAtMs: trip.receivedMs,
  };
}

/** The offset of the round trip with the smallest round trip (the newest of equals); null when none is usable. */
export function bestOffset(trips: readonly RoundTrip[]): ClockOffset | null {
  let best: ClockOffset | null = null;
  for (const trip of trips) {
    const o = offsetOf(trip);
    if (o !== null && (best === null || o.roundTripMs <= best.roundTripMs)) best = o;
  }
  return best;
}

/** The last `kept` round trips of one task manager and the offset they give. */
export class ClockOffsetEstimator {
  private readonly trips: RoundTrip[] = [];
  private best: ClockOffset | null = null;

  constructor(private readonly kept = CLOCK_SAMPLES_KEPT) {}

  /** A round trip completed; the oldest beyond `kept` expires. */
  add(trip: RoundTrip): void {
    if (offsetOf(trip) === null) return;
    this.trips.push(trip);
    if (this.trips.length > this.kept) this.trips.shift();
    this.best = bestOffset(this.trips);
  }

  /** The estimate now; null before the first round trip. */
  get estimate(): ClockOffset | null {
    return this.best;
  }

  /** The newest round trip, ms; null before the first. */
  get lastRoundTripMs(): number | null {
    const last = this.trips.at(-1);
    return last === undefined ? null : last.receivedMs - last.sentMs;
  }
}

/**
 * What to subtract from a task manager's stamps to read them on the job master's clock: the offset
 * when it is larger than its uncertainty, else 0. Two threads on one clock always measure an offset
 * within the uncertainty (the answer lies between send and receive), so stamps taken on the job
 * master's own clock are never moved by the noise of a round trip.
 */
export function correctionMs(offset: ClockOffset | null): number {
  return offset !== null && Math.abs(offset.offsetMs) > offset.uncertaintyMs ? offset.offsetMs : 0;
}

/**
 * The ack with its wall-clock stamps (`barrierArrivalsMs`, `syncStartMs`) on the job master's
 * clock. Everything else in its figures is a duration (`syncMs`, `asyncMs`, `alignmentMs`), a
 * count or a size, the same on every clock.
 */
export function ackOnJobMasterClock(ack: CheckpointAck, correction: number): CheckpointAck {
  if (correction === 0) return ack;
  const m = ack.metrics;
  return {
    ...ack,
    metrics: {
      ...m,
      barrierArrivalsMs: m.barrierArrivalsMs.map((at) => (at < 0 ? at : at - correction)),
      syncStartMs: m.syncStartMs - correction,
    },
  };
}
