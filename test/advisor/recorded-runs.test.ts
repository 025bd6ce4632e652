/**
 * The rules over figures recorded from real runs (test/advisor/fixtures/*.json, each with its
 * `recorded` line: date and command of test/advisor/record-figures.ts, which says what each run is).
 * The REST answers are reduced again here, so a change to the rules or the reduction shows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Advice, advise } from '../../src/advisor/rules.ts';
import { MIN_CHECKPOINTS } from '../../src/advisor/thresholds.ts';
import { figuresFromRest } from '../../src/web/rest/advice-route.ts';
import type { Backpressure, CheckpointConfig, CheckpointsOverview } from '../../src/web/rest/responses.ts';

interface Recorded {
  readonly recorded: string;
  readonly checkpoints: CheckpointsOverview;
  readonly config: CheckpointConfig;
  readonly backpressure: Backpressure;
}

function load(name: string): Recorded {
  return JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', `${name}.json`), 'utf8')) as Recorded;
}

function adviceOf(r: Recorded, keepCheckpoints = Number.POSITIVE_INFINITY): Advice {
  const checkpoints = { ...r.checkpoints, history: r.checkpoints.history.slice(0, keepCheckpoints) };
  return advise(figuresFromRest('recorded', checkpoints, r.config, r.backpressure));
}

function rules(a: Advice): string[] {
  if (a.kind !== 'advice') throw new Error(`expected advice, got ${a.kind}`);
  return a.recommendations.map((x) => x.rule);
}

describe('advice over recorded runs', () => {
  it('the backpressure scenario (aligned) is told to go unaligned with an aligned timeout', () => {
    const a = adviceOf(load('backpressure'));
    expect(rules(a)).toEqual(['unaligned-under-backpressure']);
    expect(a.kind === 'advice' && a.recommendations[0]!.change).toMatch(/unaligned: true, checkpointing\.alignedCheckpointTimeoutMs: \d+/);
    expect(a.kind === 'advice' && a.situation.backpressureRatio).toBeGreaterThanOrEqual(0.5);
  });

  it('a small-state quiet job keeps aligned checkpoints, no change', () => {
    const a = adviceOf(load('quiet'));
    expect(rules(a)).toEqual([]);
    expect(a.kind === 'advice' && a.situation.unaligned).toBe(false);
  });

  it('checkpoints timing out at their interval without backpressure get a longer interval or the incremental backend', () => {
    const a = adviceOf(load('timeouts'));
    expect(rules(a)).toEqual(['state-too-large-for-interval']);
    expect(a.kind === 'advice' && a.recommendations[0]!.change).toMatch(
      /timeoutMs: \d+, checkpointing\.intervalMs: \d+, or stateBackend: \{ type: 'embedded', incremental: true \}/,
    );
  });

  it('too few checkpoints of a real run give no advice, with the count needed', () => {
    expect(adviceOf(load('backpressure'), MIN_CHECKPOINTS - 1)).toEqual({
      kind: 'too-few',
      measured: MIN_CHECKPOINTS - 1,
      needed: MIN_CHECKPOINTS,
      source: 'recorded',
    });
  });
});
