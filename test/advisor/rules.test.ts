/**
 * The advisor's rules over hand-built figures (not recorded runs: the figures are chosen to sit on
 * either side of each threshold in src/advisor/thresholds.ts).
 */
import { describe, expect, it } from 'vitest';
import type { CheckpointFigure, JobFigures } from '../../src/advisor/figures.ts';
import { advise } from '../../src/advisor/rules.ts';
import { MIN_CHECKPOINTS } from '../../src/advisor/thresholds.ts';

const MB = 1024 ** 2;

function cp(i: number, status: CheckpointFigure['status'], durationMs: number, stateBytes: number): CheckpointFigure {
  return { checkpointId: i, status, timestampMs: i * 10_000, durationMs, stateBytes, inflightBytes: 0, type: 'aligned' };
}

function job(cps: CheckpointFigure[], over: Partial<JobFigures> = {}): JobFigures {
  return {
    source: 'test',
    checkpointing: { intervalMs: 10_000, timeoutMs: 10_000, unaligned: false, incremental: false },
    checkpoints: cps,
    backpressureRatio: 0,
    restarts: 0,
    ...over,
  };
}

const rules = (f: JobFigures): string[] => {
  const a = advise(f);
  if (a.kind !== 'advice') throw new Error(`expected advice, got ${a.kind}`);
  return a.recommendations.map((r) => r.rule);
};

describe('advise', () => {
  it('gives no advice with too few checkpoints, saying how many it needs', () => {
    const a = advise(job([cp(1, 'completed', 100, MB), cp(2, 'completed', 100, MB)]));
    expect(a).toEqual({ kind: 'too-few', measured: 2, needed: MIN_CHECKPOINTS, source: 'test' });
  });

  it('keeps a small quiet job aligned, with no change', () => {
    expect(rules(job([1, 2, 3, 4, 5, 6].map((i) => cp(i, 'completed', 200, MB))))).toEqual([]);
  });

  it('recommends unaligned with an aligned timeout under backpressure with slow checkpoints', () => {
    const cps = [1, 2, 3, 4, 5, 6].map((i) => cp(i, 'completed', 7_000, MB));
    expect(rules(job(cps, { backpressureRatio: 0.9 }))).toEqual(['unaligned-under-backpressure']);
    const a = advise(job(cps, { backpressureRatio: 0.9 }));
    expect(a.kind === 'advice' && a.recommendations[0]?.change).toContain('alignedCheckpointTimeoutMs');
  });

  it('without backpressure, the same slow checkpoints get a minimum pause instead', () => {
    expect(rules(job([1, 2, 3, 4, 5, 6].map((i) => cp(i, 'completed', 7_000, MB))))).toEqual(['checkpoints-back-to-back']);
  });

  it('checkpoints timing out at the interval without backpressure get a longer interval or the incremental backend', () => {
    const cps = [1, 2, 3, 4, 5, 6].map((i) => cp(i, i % 2 === 0 ? 'timed-out' : 'completed', 10_000, 200 * MB));
    const a = advise(job(cps, { restarts: 3 }));
    expect(rules(job(cps))).toEqual(['state-too-large-for-interval']);
    expect(a.kind === 'advice' && a.recommendations[0]?.change).toMatch(/intervalMs: 20000.*incremental: true/);
  });

  it('switches to unaligned between 1 and 10 GB once more than 10% time out, not at 10% or less', () => {
    const big = 2 * 1024 * MB;
    const tenPercent = Array.from({ length: 10 }, (_, i) => cp(i, i === 0 ? 'timed-out' : 'completed', 3_000, big));
    expect(rules(job(tenPercent))).toEqual([]);
    const more = Array.from({ length: 10 }, (_, i) => cp(i, i < 2 ? 'timed-out' : 'completed', 3_000, big));
    expect(rules(job(more))).toContain('unaligned-under-backpressure');
  });

  it('an interval above three minutes is shortened', () => {
    const cps = [1, 2, 3, 4, 5].map((i) => cp(i, 'completed', 200, MB));
    expect(rules(job(cps, { checkpointing: { intervalMs: 600_000, timeoutMs: 600_000, unaligned: false, incremental: false } }))).toEqual([
      'interval-too-long',
    ]);
  });
});
