/**
 * The clock-offset estimate from heartbeat round trips (NTP's offset with a minimum-round-trip
 * filter over the last samples) and the correction of checkpoint ack stamps it drives.
 */
import { describe, expect, it } from 'vitest';
import type { CheckpointAck } from '../../src/checkpoint/ack.ts';
import {
  ackOnJobMasterClock,
  bestOffset,
  CLOCK_SAMPLES_KEPT,
  ClockOffsetEstimator,
  correctionMs,
  offsetOf,
  type RoundTrip,
} from '../../src/cluster/job-master/clock-offsets.ts';
import { checkpointId } from '../../src/core/ids.ts';
import { SeededRandom } from '../../src/core/time.ts';

const T0 = 1_700_000_000_000;

/** A round trip to a task manager whose clock is `skewMs` ahead: `outMs` there, `backMs` back. */
function trip(sentMs: number, outMs: number, backMs: number, skewMs: number): RoundTrip {
  return { sentMs, receivedMs: sentMs + outMs + backMs, answeredAtMs: sentMs + outMs + skewMs };
}

describe('clock offsets from heartbeat round trips', () => {
  it('a clock 5 s ahead, symmetric round trip: offset 5000 ms, uncertainty half the round trip', () => {
    expect(offsetOf(trip(T0, 5, 5, 5_000))).toEqual({ offsetMs: 5_000, uncertaintyMs: 5, roundTripMs: 10, measuredAtMs: T0 + 10 });
    // Behind works the same way.
    expect(offsetOf(trip(T0, 2, 2, -750))?.offsetMs).toBe(-750);
  });

  it('an asymmetric round trip errs by at most its uncertainty', () => {
    const o = offsetOf(trip(T0, 9, 1, 5_000))!;
    expect(o.offsetMs).toBe(5_004);
    expect(Math.abs(o.offsetMs - 5_000)).toBeLessThanOrEqual(o.uncertaintyMs);
  });

  it('the sample of the smallest round trip wins, wherever it is among the last few', () => {
    const trips = [trip(T0, 15, 15, 5_000), trip(T0 + 1_000, 20, 2, 5_000), trip(T0 + 2_000, 1, 1, 5_000), trip(T0 + 3_000, 3, 25, 5_000)];
    const best = bestOffset(trips)!;
    expect(best.roundTripMs).toBe(2);
    expect(best.offsetMs).toBe(5_000);
    expect(best.measuredAtMs).toBe(T0 + 2_002);
    const estimator = new ClockOffsetEstimator();
    for (const t of trips) estimator.add(t);
    expect(estimator.estimate).toEqual(best);
    expect(estimator.lastRoundTripMs).toBe(28);
  });

  it('jittery round trips (seeded): the estimate stays within its uncertainty of the true offset and tightens as short ones come', () => {
    const seed = 42;
    console.log(`seed ${seed}`);
    const random = new SeededRandom(seed);
    const skewMs = 5_000 + random.next() * 100;
    const estimator = new ClockOffsetEstimator();
    let widest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 200; i++) {
      // Mostly short hops, now and then a long one in either direction (a busy thread, a queue).
      const hop = () => 0.2 + random.next() * 2 + (random.int(5) === 0 ? random.next() * 80 : 0);
      estimator.add(trip(T0 + i * 1_000, hop(), hop(), skewMs));
      const e = estimator.estimate!;
      expect(Math.abs(e.offsetMs - skewMs)).toBeLessThanOrEqual(e.uncertaintyMs + 1e-9);
      expect(e.uncertaintyMs).toBe(e.roundTripMs / 2);
      if (i >= CLOCK_SAMPLES_KEPT) widest = Math.min(widest, e.uncertaintyMs);
    }
    // With 16 samples to choose from, the one kept is a short one.
    expect(widest).toBeLessThan(3);
  });

  it('old samples expire: a short round trip wins only while it is among the last N', () => {
    const estimator = new ClockOffsetEstimator(4);
    estimator.add(trip(T0, 0.5, 0.5, 1_000)); // the shortest, with the clock then 1000 ms ahead
    for (let i = 1; i <= 3; i++) estimator.add(trip(T0 + i * 1_000, 5, 5, 1_200));
    expect(estimator.estimate!.offsetMs).toBe(1_000);
    estimator.add(trip(T0 + 4_000, 5, 5, 1_200)); // the fifth: the first is out of the window
    expect(estimator.estimate!.offsetMs).toBe(1_200);
    expect(estimator.estimate!.roundTripMs).toBe(10);
  });

  it('no estimate before the first round trip; a round trip that went backwards is no measurement', () => {
    const estimator = new ClockOffsetEstimator();
    expect(estimator.estimate).toBeNull();
    expect(estimator.lastRoundTripMs).toBeNull();
    estimator.add({ sentMs: T0 + 10, receivedMs: T0, answeredAtMs: T0 });
    expect(estimator.estimate).toBeNull();
    expect(bestOffset([])).toBeNull();
  });

  it('corrects only an offset larger than its uncertainty: on one clock an answer always lies between send and receive', () => {
    expect(correctionMs(null)).toBe(0);
    // One clock: the answer between send and receive, however asymmetric the hops.
    expect(correctionMs(offsetOf(trip(T0, 0.1, 3, 0)))).toBe(0);
    expect(correctionMs(offsetOf(trip(T0, 3, 0.1, 0)))).toBe(0);
    expect(correctionMs(offsetOf(trip(T0, 1, 1, 5_000)))).toBe(5_000);
    expect(correctionMs(offsetOf(trip(T0, 1, 1, -5_000)))).toBe(-5_000);
  });
});

describe('ack figures on the job master clock', () => {
  const ack: CheckpointAck = {
    task: { vertex: 2, subtask: 1 },
    checkpointId: checkpointId(7),
    operators: [],
    metrics: {
      syncMs: 1.5,
      asyncMs: 12,
      alignmentMs: 3.25,
      alignmentRecords: 40,
      persistedBytes: 100,
      stateBytes: 100,
      channelStateBytes: 0,
      unaligned: false,
      barrierArrivalsMs: [T0 + 5_010, -1, T0 + 5_012.5],
      buffersAhead: [3, -1, 0],
      syncStartMs: T0 + 5_013,
    },
  };

  it('moves the stamps (barrier arrivals, sync start) by the correction; durations, counts and channels not reached stay', () => {
    const moved = ackOnJobMasterClock(ack, 5_000);
    expect(moved.metrics.barrierArrivalsMs).toEqual([T0 + 10, -1, T0 + 12.5]);
    expect(moved.metrics.syncStartMs).toBe(T0 + 13);
    expect({ ...moved.metrics, barrierArrivalsMs: [], syncStartMs: 0 }).toEqual({ ...ack.metrics, barrierArrivalsMs: [], syncStartMs: 0 });
    expect(moved.task).toEqual(ack.task);
    expect(ackOnJobMasterClock(ack, 0)).toBe(ack);
  });
});
