import { describe, expect, it } from 'vitest';
import { replayCommand, runSeeds } from '../../src/sim/runner.ts';

/** The seeded budget is split over files so vitest runs the parts in parallel: 3 x 110 seeds. */
export const BUDGET_SEEDS_PER_PART = 110;

export function budgetPart(part: number): void {
  const start = 1 + part * BUDGET_SEEDS_PER_PART;
  const seeds = BUDGET_SEEDS_PER_PART;
  describe(`simulator seeded budget, part ${part}`, () => {
    it(`seeds ${start}..${start + seeds - 1} pass every checker (all modes and scenarios)`, async () => {
      console.log(`seeds ${start}..${start + seeds - 1}`);
      const lines: string[] = [];
      const summary = await runSeeds({ seeds, start, print: (l) => lines.push(l) });
      if (summary.failures.length > 0) console.log(lines.join('\n'));
      expect(summary.failures.map((f) => `${replayCommand(f)}: ${f.failures.map((x) => x.checker).join(', ')}`)).toEqual([]);
      expect(summary.byKind.ok).toBe(seeds);
      // The budget really injects faults and really checkpoints.
      expect(summary.faults).toBeGreaterThan(seeds);
      expect(summary.restarts).toBeGreaterThan(seeds / 2);
    }, 300_000);
  });
}
