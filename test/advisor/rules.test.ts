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
  return {
    checkpointId: i,
    status,
    timestampMs: i * 10_000,
    durationMs,
    stateBytes,
    inflightBytes: 0,
    type: 'aligned',
    syncMs: null,
    asyncMs: null,
    alignmentMs: null,
  };
}

/** Six completed checkpoints of `durationMs` with the given phases. */
function phased(durationMs: number, phases: Partial<CheckpointFigure>): CheckpointFigure[] {
  return [1, 2, 3, 4, 5, 6].map((i) => ({ ...cp(i, 'completed', durationMs, MB), ...phases }));
}

const CHECKPOINTING: JobFigures['checkpointing'] = { intervalMs: 10_000, timeoutMs: 10_000, unaligned: false, alignedTimeoutMs: 0, incremental: false };

function job(cps: CheckpointFigure[], over: Partial<JobFigures> = {}): JobFigures {
  return {
    source: 'test',
    checkpointing: CHECKPOINTING,
    checkpoints: cps,
    backpressureRatio: 0,
    restarts: 0,
    lastRestoreMs: null,
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
    expect(rules(job(cps, { checkpointing: { ...CHECKPOINTING, intervalMs: 600_000, timeoutMs: 600_000 } }))).toEqual(['interval-too-long']);
  });

  it('aligned checkpoints that are mostly alignment, backpressure unknown, go unaligned; below the share they get a pause', () => {
    const aligning = phased(7_000, { alignmentMs: 3_500, syncMs: 1, asyncMs: 10 });
    const unknownPressure = { backpressureRatio: null };
    expect(rules(job(aligning, unknownPressure))).toEqual(['unaligned-long-alignment']);
    const a = advise(job(aligning, unknownPressure));
    expect(a.kind === 'advice' && a.situation.alignmentShare).toBe(0.5);
    expect(a.kind === 'advice' && a.recommendations[0]!.because).toContain('50% of checkpoint time went to aligning (up to 3500 ms)');
    expect(rules(job(phased(7_000, { alignmentMs: 3_400, syncMs: 1, asyncMs: 10 }), unknownPressure))).toEqual(['checkpoints-back-to-back']);
    // already unaligned: nothing to switch
    expect(rules(job(aligning, { ...unknownPressure, checkpointing: { ...CHECKPOINTING, unaligned: true, alignedTimeoutMs: 1_000 } }))).toEqual([
      'checkpoints-back-to-back',
    ]);
  });

  it('a long sync phase gets incremental snapshots, not below 100 ms or half of sync plus async, nor when already incremental', () => {
    expect(rules(job(phased(300, { syncMs: 100, asyncMs: 100 })))).toEqual(['long-sync-phase']);
    const a = advise(job(phased(300, { syncMs: 100, asyncMs: 100 })));
    expect(a.kind === 'advice' && a.recommendations[0]).toMatchObject({ change: "stateBackend: { type: 'embedded', incremental: true }" });
    expect(a.kind === 'advice' && a.recommendations[0]!.cost).toContain('restore reads a chain');
    expect(rules(job(phased(300, { syncMs: 99, asyncMs: 10 })))).toEqual([]);
    expect(rules(job(phased(300, { syncMs: 100, asyncMs: 101 })))).toEqual([]);
    expect(rules(job(phased(300, { syncMs: 100, asyncMs: 100 }), { checkpointing: { ...CHECKPOINTING, incremental: true } }))).toEqual([]);
  });

  it('back-to-back checkpoints whose time is mostly the async upload may also overlap (maxConcurrent 2)', () => {
    const upload = advise(job(phased(7_000, { syncMs: 10, asyncMs: 6_000, alignmentMs: 0 })));
    expect(upload.kind === 'advice' && upload.recommendations.map((r) => r.change)).toEqual([
      'checkpointing.minPauseMs: 7000, or checkpointing.maxConcurrent: 2',
    ]);
    const sync = advise(job(phased(7_000, { syncMs: 4_000, asyncMs: 3_000, alignmentMs: 0 }), { checkpointing: { ...CHECKPOINTING, incremental: true } }));
    expect(sync.kind === 'advice' && sync.recommendations.map((r) => r.change)).toEqual(['checkpointing.minPauseMs: 7000']);
  });

  it('a slow restore with a long interval shortens the interval so restore plus replay stay within three minutes', () => {
    const cps = [1, 2, 3, 4, 5].map((i) => cp(i, 'completed', 200, MB));
    const slow = { checkpointing: { ...CHECKPOINTING, intervalMs: 150_000, timeoutMs: 600_000 }, lastRestoreMs: 60_000, restarts: 1 };
    expect(rules(job(cps, slow))).toEqual(['slow-restore']);
    const a = advise(job(cps, slow));
    expect(a.kind === 'advice' && a.recommendations[0]!.change).toMatch(
      /^checkpointing\.intervalMs: 120000, with stateBackend: \{ type: 'embedded', incremental: true \}/,
    );
    expect(a.kind === 'advice' && a.situation.lastRestoreMs).toBe(60_000);
    // restore plus interval at the target: nothing; a short interval cannot shrink below a minute
    expect(rules(job(cps, { ...slow, lastRestoreMs: 30_000 }))).toEqual([]);
    expect(rules(job(cps, { ...slow, checkpointing: { ...CHECKPOINTING, intervalMs: 60_000 }, lastRestoreMs: 170_000 }))).toEqual([]);
    // above three minutes the interval rule and the restore rule would both shorten it: the restore's length wins
    expect(rules(job(cps, { ...slow, checkpointing: { ...CHECKPOINTING, intervalMs: 600_000, timeoutMs: 600_000 } }))).toEqual(['slow-restore']);
  });

  it('unaligned checkpoints storing more in-flight bytes than state get an aligned timeout, not when they have one', () => {
    const cps = [1, 2, 3, 4, 5].map((i) => ({ ...cp(i, 'completed', 200, MB), inflightBytes: MB, type: 'unaligned' as const }));
    const unaligned = { checkpointing: { ...CHECKPOINTING, unaligned: true, alignedTimeoutMs: 0 } };
    expect(rules(job(cps, unaligned))).toEqual(['inflight-heavy']);
    expect(
      rules(
        job(
          cps.map((c) => ({ ...c, inflightBytes: MB - 1 })),
          unaligned,
        ),
      ),
    ).toEqual([]);
    expect(rules(job(cps, { checkpointing: { ...CHECKPOINTING, unaligned: true, alignedTimeoutMs: 1_000 } }))).toEqual([]);
  });

  it('a checkpoint at 80% of its timeout raises the timeout before any times out', () => {
    const near = { checkpointing: { ...CHECKPOINTING, intervalMs: 60_000, timeoutMs: 10_000 } };
    expect(
      rules(
        job(
          [1, 2, 3, 4, 5].map((i) => cp(i, 'completed', 8_000, MB)),
          near,
        ),
      ),
    ).toEqual(['timeout-near']);
    expect(
      rules(
        job(
          [1, 2, 3, 4, 5].map((i) => cp(i, 'completed', 7_999, MB)),
          near,
        ),
      ),
    ).toEqual([]);
  });

  it('state growing past 1 GB within a day at its rate gets incremental snapshots; slower growth does not', () => {
    // 10 s interval: 8640 checkpoints a day
    const grow = (perCheckpoint: number) => [1, 2, 3, 4, 5].map((i) => cp(i, 'completed', 200, MB + i * perCheckpoint));
    expect(rules(job(grow(130 * 1024)))).toEqual(['state-growing']);
    expect(rules(job(grow(100 * 1024)))).toEqual([]);
    expect(rules(job(grow(130 * 1024), { checkpointing: { ...CHECKPOINTING, incremental: true } }))).toEqual([]);
  });

  it("the size rules read the largest state measured, not a bounded job's smaller final checkpoint", () => {
    const GB = 1024 * MB;
    // 1-10 GB with 2 of 10 timing out: unaligned; the final checkpoint, after the windows fired, holds 1 MB
    const cps = Array.from({ length: 10 }, (_, i) => cp(i, i < 2 ? 'timed-out' : 'completed', 3_000, i === 9 ? MB : 2 * GB));
    const a = advise(job(cps));
    expect(a.kind === 'advice' && [a.situation.latestStateBytes, a.situation.maxStateBytes]).toEqual([MB, 2 * GB]);
    expect(rules(job(cps))).toContain('unaligned-under-backpressure');
  });
});
