import { describe, expect, it } from 'vitest';
import { knobsFor, runSeed } from '../../src/sim/run-seed.ts';

describe('simulator determinism', () => {
  it('the same seed gives the same event trace; another seed gives another', async () => {
    console.log('seeds 11, 11, 12 (join, exactly-once)');
    // Both seeds run over in-memory task managers: the transport keeps the run deterministic.
    expect(knobsFor(11, 'join', 'exactly-once').taskManagers).toBe(3);
    expect(knobsFor(12, 'join', 'exactly-once').taskManagers).toBe(3);
    const a = await runSeed(11, 'join', 'exactly-once');
    const b = await runSeed(11, 'join', 'exactly-once');
    const c = await runSeed(12, 'join', 'exactly-once');
    expect(a.kind).toBe('ok');
    expect(a.traceHash).toBe(b.traceHash);
    expect(a.stats).toEqual(b.stats);
    expect(c.traceHash).not.toBe(a.traceHash);
  });

  it('runs a user job module as well as the built-in scenarios', async () => {
    const mod = await import('../cli/fixtures/tiny-job.ts');
    console.log('seed 3 (tiny-job module, exactly-once)');
    const o = await runSeed(3, { name: 'tiny', path: 'tiny-job.ts', options: mod.options, build: mod.default }, 'exactly-once');
    expect(o.kind).toBe('ok');
    expect(o.stats.committed).toBe(2000);
  });
});
