/**
 * The per-split watermark multiplexer of a source subtask, driven by a manual processing-time
 * service: each split's generator and idleness, the minimum over active splits, monotonic output,
 * idleness of the subtask only when every split is idle, released splits, the main output.
 */
import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../../src/core/assert.ts';
import { WatermarkStrategy } from '../../../src/index.ts';
import type { Output } from '../../../src/runtime/operator.ts';
import { newElementTimestamp } from '../../../src/runtime/time/element-timestamp.ts';
import { WatermarkMultiplexer } from '../../../src/runtime/time/watermark-multiplexer.ts';
import { ManualEnvironment } from '../../support/manual-env.ts';

interface Event {
  readonly ts: number;
}

/** A multiplexer whose downstream logs `r<ts>`, `wm<ms>`, `idle` and `active` in order. */
function setup(strategy: WatermarkStrategy<Event>, intervalMs = 10) {
  const time = new ManualEnvironment(); // processing time: due callbacks run in time order
  const log: string[] = [];
  const timestamps = newElementTimestamp();
  const output: Output = {
    collect: () => {},
    sideOutput: () => {},
    emitWatermark: (ms) => log.push(`wm${ms}`),
    emitWatermarkStatus: (idle) => log.push(idle ? 'idle' : 'active'),
  };
  const downstream = { collect: (e: Event) => log.push(`r${e.ts}@${timestamps.current}`) };
  const mux = new WatermarkMultiplexer(strategy, { output, timestamps, processingTime: time, autoWatermarkIntervalMs: intervalMs }, downstream);
  mux.start();
  const watermarks = () => log.filter((e) => e.startsWith('wm')).map((e) => Number(e.slice(2)));
  return { time, log, mux, watermarks };
}

const bounded = (boundMs: number) => WatermarkStrategy.forBoundedOutOfOrderness<Event>(boundMs).withTimestampAssigner((e) => e.ts);

describe('watermark multiplexer (per-split watermarks of a source subtask)', () => {
  it('the subtask watermark is the minimum over its splits: a fast split does not run ahead of a slow one', () => {
    const { time, log, mux, watermarks } = setup(bounded(0));
    const a = mux.createOutputForSplit('a');
    const b = mux.createOutputForSplit('b');
    expect(mux.createOutputForSplit('a')).toBe(a); // one output per split
    for (let ts = 100; ts <= 1000; ts += 100) a.collect({ ts });
    time.advanceTo(10);
    expect(watermarks()).toEqual([]); // b has sent nothing: it holds the watermark at the minimum
    b.collect({ ts: 20 });
    b.collect({ ts: 50 });
    time.advanceTo(20);
    expect(watermarks()).toEqual([49]);
    a.collect({ ts: 5000 });
    b.collect({ ts: 300 });
    time.advanceTo(30);
    expect(watermarks()).toEqual([49, 299]);
    // records carry their own timestamp in the subtask's register
    expect(log.filter((e) => e.startsWith('r'))).toEqual([
      ...[100, 200, 300, 400, 500, 600, 700, 800, 900, 1000].map((t) => `r${t}@${t}`),
      'r20@20',
      'r50@50',
      'r5000@5000',
      'r300@300',
    ]);
  });

  it('a split silent for idleTimeoutMs stops counting; the subtask is idle only when every split is', () => {
    const { time, log, mux, watermarks } = setup(bounded(0).withIdleness(50));
    const a = mux.createOutputForSplit('a');
    const b = mux.createOutputForSplit('b');
    b.collect({ ts: 10 });
    for (let t = 0; t <= 100; t += 10) {
      a.collect({ ts: 1000 + t });
      time.advanceTo(t + 10);
    }
    // b went idle 50 ms after its record: from then a alone drives the watermark
    expect(watermarks()[0]).toBe(9);
    expect(watermarks().at(-1)).toBe(1099);
    expect(log).not.toContain('idle');
    time.advanceTo(200); // a is silent too
    expect(log.at(-1)).toBe('idle');
    expect(log.filter((e) => e === 'idle')).toHaveLength(1);
  });

  it('activity is noted per periodic round: a split goes idle between idleTimeoutMs and one interval more after its last record', () => {
    const { time, log, mux } = setup(bounded(0).withIdleness(50));
    const a = mux.createOutputForSplit('a');
    time.advanceTo(5);
    a.collect({ ts: 1 }); // seen by the round at 10
    time.advanceTo(59);
    expect(log).not.toContain('idle');
    time.advanceTo(60);
    expect(log.at(-1)).toBe('idle');
  });

  it('an idle split that sends again counts again, without moving the watermark back, so its records within the bound are on time', () => {
    const { time, log, mux, watermarks } = setup(bounded(100).withIdleness(50));
    const a = mux.createOutputForSplit('a');
    const b = mux.createOutputForSplit('b');
    b.collect({ ts: 150 });
    a.collect({ ts: 200 });
    time.advanceTo(10);
    expect(watermarks()).toEqual([49]);
    for (let t = 10; t < 100; t += 10) {
      a.collect({ ts: 600 });
      time.advanceTo(t + 10);
    }
    expect(watermarks().at(-1)).toBe(499); // b idle: a's 600 - 101
    // b rejoins at 560: on time, but its watermark (49, then 459) is below the output: nothing goes out
    b.collect({ ts: 560 });
    a.collect({ ts: 5000 });
    time.advanceTo(110);
    expect(watermarks().at(-1)).toBe(499);
    // a runs far ahead, but b counts at once (not only when it caught up with the output): b's
    // record at 520 (within b's bound) is still above the watermark
    a.collect({ ts: 9000 });
    b.collect({ ts: 520 });
    time.advanceTo(120);
    expect(watermarks().at(-1)).toBe(499);
    expect(watermarks().every((w, i, all) => i === 0 || w > all[i - 1]!)).toBe(true);
    b.collect({ ts: 700 });
    time.advanceTo(130);
    expect(watermarks().at(-1)).toBe(599);
    expect(log).not.toContain('idle'); // a was active all along: the subtask never went idle
  });

  it('a rejoining split makes an idle subtask active before its record goes out', () => {
    const { time, log, mux } = setup(bounded(0).withIdleness(30));
    const a = mux.createOutputForSplit('a');
    mux.createOutputForSplit('b');
    a.collect({ ts: 10 });
    time.advanceTo(100);
    // b (silent from the start) went idle at 30, a (active at the round of 10) at 40
    expect(log).toEqual(['r10@10', 'wm9', 'idle']);
    a.collect({ ts: 20 });
    expect(log.slice(-2)).toEqual(['active', 'r20@20']);
  });

  it('a released (ended) split stops holding the watermark back; with none left the subtask is idle', () => {
    const { time, log, mux, watermarks } = setup(bounded(0));
    const a = mux.createOutputForSplit('a');
    const b = mux.createOutputForSplit('b');
    a.collect({ ts: 1000 });
    b.collect({ ts: 10 });
    time.advanceTo(10);
    expect(watermarks()).toEqual([9]);
    mux.releaseOutputForSplit('b');
    expect(watermarks()).toEqual([9, 999]);
    expect(() => b.collect({ ts: 11 })).toThrow(AssertionError);
    mux.releaseOutputForSplit('a');
    expect(log.at(-1)).toBe('idle');
    mux.finish(); // end of input: active again, the maximum watermark once
    mux.finish();
    expect(log.slice(-2)).toEqual(['active', 'wmInfinity']);
  });

  it('a split generator may mark its split idle and active itself', () => {
    let outputs: Array<{ markIdle(): void; markActive(): void }> = [];
    const strategy = WatermarkStrategy.forGenerator<Event>(() => ({
      onEvent: (_e, ts, out) => {
        outputs.push(out);
        out.emitWatermark(ts);
      },
      onPeriodicEmit: () => {},
    })).withTimestampAssigner((e) => e.ts);
    const { mux, log, watermarks } = setup(strategy);
    const a = mux.createOutputForSplit('a');
    const b = mux.createOutputForSplit('b');
    a.collect({ ts: 100 });
    b.collect({ ts: 5 });
    expect(watermarks()).toEqual([5]); // on events, without waiting for a period
    const [outA, outB] = outputs;
    outputs = [];
    outB!.markIdle();
    expect(watermarks()).toEqual([5, 100]);
    outA!.markIdle();
    expect(log.at(-1)).toBe('idle');
    outB!.markActive();
    expect(log.at(-1)).toBe('active');
    expect(watermarks()).toEqual([5, 100]); // b's 5 is behind: nothing goes back
  });

  it('a reader without splits uses the main output: one generator for the subtask, as before', () => {
    const { time, mux, watermarks, log } = setup(bounded(0).withIdleness(30));
    mux.collect({ ts: 100 });
    mux.collect({ ts: 50 });
    time.advanceTo(10);
    expect(watermarks()).toEqual([99]);
    time.advanceTo(100);
    expect(log.at(-1)).toBe('idle');
    // a reader that emitted on the main output cannot switch to split outputs
    expect(() => mux.createOutputForSplit('a')).toThrow(AssertionError);
  });

  it('the main output counts until the first split output is created, then never again', () => {
    const { time, mux, log } = setup(bounded(0).withIdleness(30));
    time.advanceTo(100);
    expect(log).toEqual(['idle']); // nothing sent by then (a subtask without splits goes idle the same way)
    const a = mux.createOutputForSplit('a');
    expect(log).toEqual(['idle', 'active']); // a new split holds the watermark from the start
    expect(() => mux.collect({ ts: 1 })).toThrow(AssertionError);
    a.collect({ ts: 500 });
    time.advanceTo(110);
    expect(log.at(-1)).toBe('wm499');
  });
});
