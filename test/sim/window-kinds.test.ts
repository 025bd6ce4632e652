import { describe, expect, it } from 'vitest';
import { knobsFor } from '../../src/sim/run-seed.ts';
import { runSeeds } from '../../src/sim/runner.ts';
import { finalCounts } from '../../src/sim/scenarios/sequence-source.ts';
import { SimRun } from '../../src/sim/sim-run.ts';
import { COUNT_SLIDING, COUNT_TUMBLING, GLOBAL_FIRE_EVERY, GLOBAL_PURGE_EVERY } from '../../src/sim/scenarios/window-count-scenario.ts';
import { checkProcessingWindows, processingDone, PT_SLIDING_MS, PT_TUMBLING_MS } from '../../src/sim/scenarios/window-processing-scenario.ts';

const sumRange = (a: number, b: number) => ((a + b) * (b - a + 1)) / 2;

/** What the count-window scenario must emit for a key with records 1..m, computed without Weir. */
function countReference(key: string, m: number): string[] {
  const out: string[] = [];
  for (let w = 0; (w + 1) * COUNT_TUMBLING <= m; w++) {
    const first = w * COUNT_TUMBLING + 1;
    const last = first + COUNT_TUMBLING - 1;
    out.push(`C|${key}|${first}|${last}|${sumRange(first, last)}|${COUNT_TUMBLING}`);
  }
  const [size, slide] = COUNT_SLIDING;
  for (let seq = slide; seq <= m; seq += slide) {
    const first = Math.max(1, seq - size + 1);
    out.push(`S|${key}|${first}|${seq}|${sumRange(first, seq)}|${seq - first + 1}`);
  }
  let from = 1;
  let nth = 0;
  for (let seq = 1; seq <= m; seq++) {
    if (seq % GLOBAL_FIRE_EVERY !== 0 && seq % GLOBAL_PURGE_EVERY !== 0) continue;
    out.push(`G|${key}|${++nth}|${from}|${seq}|${sumRange(from, seq)}|${seq - from + 1}`);
    if (seq % GLOBAL_PURGE_EVERY === 0) from = seq + 1;
  }
  return out;
}

describe('simulator count-window scenario (window-count)', () => {
  it('the fault-free run emits exactly what a plain computation over each key gives', async () => {
    console.log('seed 5 (window-count, exactly-once, no faults)');
    const k = knobsFor(5, 'window-count', 'exactly-once');
    const run = await new SimRun(k, 'window-count', false).run();
    const expected = [...finalCounts({ src: 'w', splits: 1, keysPerSplit: k.source.keysPerSplit, count: k.source.count })].flatMap(([key, m]) =>
      countReference(key, m),
    );
    expect(expected.length).toBeGreaterThan(100);
    expect([...run.committed].sort()).toEqual(expected.sort());
  });

  it('seeds through every fault and mode pass every checker', async () => {
    const lines: string[] = [];
    const summary = await runSeeds({ seeds: 8, start: 1, job: 'window-count', print: (l) => lines.push(l) });
    if (summary.failures.length > 0) console.log(lines.join('\n'));
    expect(summary.failures).toEqual([]);
    expect(summary.restarts).toBeGreaterThan(4);
  }, 300_000);
});

describe('simulator processing-time window scenario (window-processing)', () => {
  const expected = new Map([
    ['a', 6],
    ['b', 2],
  ]);
  /** A correct output: a's records 1-4 arrive in [0, 10), 5-6 in [20, 30); b's in [10, 20). */
  const good = [
    'T|a|0|20|1|4|10|4',
    'T|a|20|40|5|6|11|2',
    'T|b|0|20|1|2|3|2',
    'S|a|-20|10|1|4|10|4',
    'S|a|-10|20|1|4|10|4',
    'S|a|0|30|1|6|21|6',
    'S|a|10|40|5|6|11|2',
    'S|a|20|50|5|6|11|2',
    'S|b|-10|20|1|2|3|2',
    'S|b|0|30|1|2|3|2',
    'S|b|10|40|1|2|3|2',
    'X|a|0|14|1|4|10|4',
    'X|a|20|26|5|6|11|2',
    'X|b|10|15|1|2|3|2',
  ];
  const check = (lines: string[], g: 'exactly-once' | 'at-least-once' = 'exactly-once') => checkProcessingWindows(lines, expected, g);

  it('accepts a correct output and finds each kind of wrong one', () => {
    expect(PT_TUMBLING_MS).toBe(20);
    expect(PT_SLIDING_MS).toEqual([30, 10]);
    expect(check(good)).toEqual([]);
    // A record lost from a window: the run is broken and record 3 is in no tumbling window.
    const lost = good.map((l) => (l === 'T|a|0|20|1|4|10|4' ? 'T|a|0|20|1|4|7|3' : l));
    expect(check(lost).join('\n')).toMatch(/holds 3 records summing to 7/);
    // A window committed twice: duplicate under exactly-once, tolerated under at-least-once.
    expect(check([...good, good[0]!]).join('\n')).toMatch(/duplicate/);
    expect(check([...good, good[0]!], 'at-least-once')).toEqual([]);
    // A record in two tumbling windows (a replay counted again).
    const twice = [...good, 'T|a|40|60|6|6|6|1'];
    expect(check(twice).join('\n')).toMatch(/record 6 is counted in 2 windows/);
    // A sliding window missing: records 1-4 of a in 2 of 3 sliding windows.
    expect(check(good.filter((l) => l !== 'S|a|-20|10|1|4|10|4')).join('\n')).toMatch(/record 1 is counted in 2 windows, expected 3/);
    // A record never counted (its window never fired).
    expect(check(good.filter((l) => l !== 'X|b|10|15|1|2|3|2')).join('\n')).toMatch(/X b: record 1 is counted in 0 windows/);
    // Sessions overlapping in time, and a window of the wrong size.
    const overlap = good.map((l) => (l === 'X|a|20|26|5|6|11|2' ? 'X|a|12|26|5|6|11|2' : l));
    expect(check(overlap).join('\n')).toMatch(/out of order or overlap/);
    expect(check(good.map((l) => (l === 'T|b|0|20|1|2|3|2' ? 'T|b|0|25|1|2|3|2' : l))).join('\n')).toMatch(/not an aligned 20 ms window/);
  });

  it('keeps the job open until every record is counted, not until the counts add up', () => {
    expect(processingDone(good, expected)).toBe(true);
    expect(processingDone(good.slice(1), expected)).toBe(false);
    // a's record 6 counted twice in tumbling windows cannot stand in for record 1, not counted yet.
    const unbalanced = good.map((l) => (l === 'T|a|0|20|1|4|10|4' ? 'T|a|0|20|2|4|9|3' : l)).concat('T|a|40|60|6|6|6|1');
    expect(processingDone(unbalanced, expected)).toBe(false);
  });

  it('seeds through every fault and mode pass every checker', async () => {
    const lines: string[] = [];
    const summary = await runSeeds({ seeds: 8, start: 1, job: 'window-processing', print: (l) => lines.push(l) });
    if (summary.failures.length > 0) console.log(lines.join('\n'));
    expect(summary.failures).toEqual([]);
    expect(summary.restarts).toBeGreaterThan(4);
  }, 300_000);
});
