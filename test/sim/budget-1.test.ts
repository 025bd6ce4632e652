import { describe, expect, it } from 'vitest';
import { replayCommand, runSeeds } from '../../src/sim/runner.ts';

// Part 1 of the seeded budget: 3 files x 110 seeds = 330 seeds, both modes, all four scenarios.
const START = 1 + 1 * 110;
const SEEDS = 110;

describe('simulator seeded budget, part 1', () => {
  it(`seeds ${START}..${START + SEEDS - 1} pass every checker`, async () => {
    console.log(`seeds ${START}..${START + SEEDS - 1}`);
    const lines: string[] = [];
    const summary = await runSeeds({ seeds: SEEDS, start: START, print: (l) => lines.push(l) });
    if (summary.failures.length > 0) console.log(lines.join('\n'));
    expect(summary.failures.map((f) => `${replayCommand(f)}: ${f.failures.map((x) => x.checker).join(', ')}`)).toEqual([]);
    expect(summary.byKind.ok).toBe(SEEDS);
    // The budget really injects faults and really checkpoints.
    expect(summary.faults).toBeGreaterThan(SEEDS);
    expect(summary.restarts).toBeGreaterThan(SEEDS / 2);
  }, 240_000);
});
