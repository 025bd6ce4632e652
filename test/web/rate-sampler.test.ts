import { describe, expect, it } from 'vitest';
import type { TaskHandle } from '../../src/cluster/job-master/attempt-deployment.ts';
import { BackpressureMeter } from '../../src/runtime/backpressure-meter.ts';
import { backpressureLevel, RateSampler } from '../../src/web/rate-sampler.ts';
import { summaryOf } from '../../src/web/rest/checkpoint-routes.ts';

function task(o: Partial<TaskHandle> & { vertex: number; subtask: number }): TaskHandle {
  return {
    id: { vertex: o.vertex, subtask: o.subtask },
    name: 'v',
    isSourceTask: o.isSourceTask ?? false,
    status: 'RUNNING',
    sourceRecordsOut: o.sourceRecordsOut ?? 0,
    sinkRecordsIn: 0,
    recordsIn: o.recordsIn ?? 0,
    recordsWritten: o.recordsWritten ?? 0,
    backpressuredMs: o.backpressuredMs ?? 0,
    changelog: null,
    triggerCheckpoint: () => {},
    notifyCheckpointComplete: () => {},
    notifyCheckpointAborted: () => {},
  } as TaskHandle;
}

describe('rate sampler', () => {
  it('rates are deltas over the interval; a source counts what it read as input; backpressure is the blocked share', () => {
    const s = new RateSampler();
    s.sample(
      [task({ vertex: 0, subtask: 0, isSourceTask: true, sourceRecordsOut: 100, recordsWritten: 100 }), task({ vertex: 1, subtask: 0, recordsIn: 50 })],
      1000,
    );
    expect(s.ratesOf(0, 0)).toEqual({ recordsInPerSec: 0, recordsOutPerSec: 0, backpressuredRatio: 0 });
    s.sample(
      [
        task({ vertex: 0, subtask: 0, isSourceTask: true, sourceRecordsOut: 300, recordsWritten: 300, backpressuredMs: 1500 }),
        task({ vertex: 1, subtask: 0, recordsIn: 250 }),
      ],
      3000,
    );
    expect(s.ratesOf(0, 0)).toEqual({ recordsInPerSec: 100, recordsOutPerSec: 100, backpressuredRatio: 0.75 });
    expect(s.ratesOf(1, 0).recordsInPerSec).toBe(100);
    expect(s.sampledAtMs).toBe(3000);
  });

  it('a restarted subtask (counters went down) is measured from zero', () => {
    const s = new RateSampler();
    s.sample([task({ vertex: 1, subtask: 0, recordsIn: 1000 })], 0);
    s.sample([task({ vertex: 1, subtask: 0, recordsIn: 40 })], 1000);
    expect(s.ratesOf(1, 0).recordsInPerSec).toBe(40);
  });

  it('levels as Flink: ok up to 10 %, low up to 50 %, high above', () => {
    expect([0, 0.1, 0.11, 0.5, 0.51, 1].map(backpressureLevel)).toEqual(['ok', 'ok', 'low', 'low', 'high', 'high']);
  });
});

describe('backpressure meter', () => {
  it('counts blocked time between a block and the next step with credit, including a block in progress', () => {
    const m = new BackpressureMeter();
    m.unblocked(0); // not blocked: nothing
    m.blocked(10);
    m.blocked(12); // still the same block
    expect(m.blockedMs(15)).toBe(5);
    m.unblocked(20);
    expect(m.blockedMs(100)).toBe(10);
    m.blocked(100);
    m.unblocked(101);
    expect(m.blockedMs(200)).toBe(11);
  });
});

describe('summaries', () => {
  it('min, avg, percentiles and max; all zero for none', () => {
    expect(summaryOf([])).toEqual({ min: 0, max: 0, avg: 0, p50: 0, p90: 0, p99: 0 });
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(summaryOf(xs)).toEqual({ min: 1, max: 100, avg: 51, p50: 50, p90: 90, p99: 99 });
  });
});
