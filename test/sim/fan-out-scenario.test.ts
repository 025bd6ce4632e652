/**
 * The fan-out scenario (`--job fan-out`): a source's tag stage feeds the keyed check through a
 * writer and a second stateful stage chained beside it, so one subtask's chain branches. Seeds
 * through every fault, mode, kill and rescale must pass every checker.
 */
import { describe, expect, it } from 'vitest';
import { replayCommand, runSeeds } from '../../src/sim/runner.ts';

describe('simulator fan-out scenario', () => {
  it('seeds through every fault, mode, kill and rescale pass every checker', async () => {
    const lines: string[] = [];
    const summary = await runSeeds({ seeds: 12, start: 1, job: 'fan-out', print: (l) => lines.push(l) });
    if (summary.failures.length > 0) console.log(lines.join('\n'));
    expect(summary.failures.map(replayCommand)).toEqual([]);
    expect(summary.restarts).toBeGreaterThan(12);
    expect(summary.recovery.kills).toBeGreaterThan(0);
  }, 300_000);
});
