import { describe, expect, it } from 'vitest';
import { replayCommand } from '../../src/sim/runner.ts';
import { runSeed, type SimMode } from '../../src/sim/run-seed.ts';
import type { ScenarioName } from '../../src/sim/scenarios.ts';

/**
 * Seeds that found engine bugs, kept so the bugs stay fixed. Each line says what the seed found.
 * (The simulator's parameter draws changed since some of them were found; each still drives the
 * engine through the path that broke.)
 */
const FOUND: ReadonlyArray<{ seed: number; job: ScenarioName; mode: SimMode; bug: string }> = [
  { seed: 87, job: 'file-sink', mode: 'at-least-once', bug: 'a stop-with-savepoint and the end-of-input final checkpoint ran at once; tasks finished on the first and never acked the second (liveness)' },
  { seed: 115, job: 'file-sink', mode: 'exactly-once', bug: 'same as seed 87, with exactly-once' },
  { seed: 102, job: 'union', mode: 'at-least-once', bug: 'same as seed 87, with a union' },
  { seed: 15, job: 'file-sink', mode: 'aligned-timeout', bug: 'after a rescale from a savepoint, a new in-progress file truncated an old subtask\'s pending one, and open() deleted files another subtask still had to commit (lost and duplicated output)' },
  { seed: 6692, job: 'keyed-counts', mode: 'aligned-timeout', bug: 'a commit failed after a stop-with-savepoint completed; with no checkpoint retained the job recovered from scratch, repeating the output the savepoint had committed; and the stop was reported as done although the job ran on' },
  { seed: 410, job: 'union', mode: 'aligned-timeout', bug: 'same as seed 6692, with a union' },
  { seed: 471, job: 'file-sink', mode: 'aligned-timeout', bug: 'same as seed 6692 with the file sink: the fresh start deleted the savepoint\'s pre-committed files, and the run resumed from the savepoint could never commit them' },
  { seed: 9673, job: 'join', mode: 'aligned-timeout', bug: 'same as seed 6692, with a join' },
];

describe('simulator regression seeds', () => {
  it.each(FOUND.map((f) => [`seed ${f.seed} (${f.job}, ${f.mode})`, f] as const))('%s passes', async (_name, f) => {
    console.log(`seed ${f.seed}: ${f.bug}`);
    const outcome = await runSeed(f.seed, f.job, f.mode);
    expect(outcome.failures, replayCommand(outcome)).toEqual([]);
  });
});
