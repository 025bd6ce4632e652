/**
 * Per-subtask rates for the REST API, the metrics and the dashboard: every sample compares each
 * subtask's counters (records in and out, milliseconds blocked on output) with the previous sample
 * and keeps records per second and the share of the interval spent backpressured. A subtask whose
 * counters went down was restarted: it is measured from zero.
 */
import type { TaskHandle } from '../cluster/job-master/attempt-deployment.ts';

/** The rates of one subtask over the last sampling interval. */
export interface SubtaskRates {
  readonly recordsInPerSec: number;
  readonly recordsOutPerSec: number;
  /** Share of the interval blocked on output, 0..1. */
  readonly backpressuredRatio: number;
}

interface Counters {
  readonly recordsIn: number;
  readonly recordsOut: number;
  readonly backpressuredMs: number;
}

const ZERO: SubtaskRates = { recordsInPerSec: 0, recordsOutPerSec: 0, backpressuredRatio: 0 };

/** Records a source emitted count as its input: a source reads from outside, not from channels. */
export function countersOf(task: TaskHandle): Counters {
  return {
    recordsIn: task.isSourceTask ? task.sourceRecordsOut : task.recordsIn,
    recordsOut: task.recordsWritten,
    backpressuredMs: task.backpressuredMs,
  };
}

export class RateSampler {
  private previous = new Map<string, Counters>();
  private previousAtMs: number | null = null;
  private rates = new Map<string, SubtaskRates>();

  /** Takes a sample of `tasks` at wall-clock `nowMs`. */
  sample(tasks: readonly TaskHandle[], nowMs: number): void {
    const next = new Map<string, Counters>();
    const rates = new Map<string, SubtaskRates>();
    const seconds = this.previousAtMs === null ? 0 : (nowMs - this.previousAtMs) / 1000;
    for (const task of tasks) {
      const key = `${task.id.vertex}/${task.id.subtask}`;
      const now = countersOf(task);
      next.set(key, now);
      const before = this.previous.get(key);
      if (seconds <= 0 || before === undefined) continue;
      const restarted = now.recordsIn < before.recordsIn || now.recordsOut < before.recordsOut || now.backpressuredMs < before.backpressuredMs;
      const base = restarted ? { recordsIn: 0, recordsOut: 0, backpressuredMs: 0 } : before;
      rates.set(key, {
        recordsInPerSec: (now.recordsIn - base.recordsIn) / seconds,
        recordsOutPerSec: (now.recordsOut - base.recordsOut) / seconds,
        backpressuredRatio: Math.min(1, Math.max(0, (now.backpressuredMs - base.backpressuredMs) / (seconds * 1000))),
      });
    }
    this.previous = next;
    this.previousAtMs = nowMs;
    this.rates = rates;
  }

  /** The rates of a subtask over the last interval (zero before two samples). */
  ratesOf(vertex: number, subtask: number): SubtaskRates {
    return this.rates.get(`${vertex}/${subtask}`) ?? ZERO;
  }

  /** Wall-clock ms of the last sample, or null before the first. */
  get sampledAtMs(): number | null {
    return this.previousAtMs;
  }
}

/** Flink's backpressure levels: ok up to 10 %, low up to 50 %, high above. */
export function backpressureLevel(ratio: number): 'ok' | 'low' | 'high' {
  return ratio <= 0.1 ? 'ok' : ratio <= 0.5 ? 'low' : 'high';
}
