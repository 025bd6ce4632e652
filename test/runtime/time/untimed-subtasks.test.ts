/**
 * The event-time register starts untimed and skips the per-record paths until something gives
 * records event time (element-timestamp.ts). These tests check that every way event time enters
 * a subtask switches it on: an assigner chained after a source without watermarks, a source
 * strategy read across a network edge, and an event-time timer in a subtask whose input carries
 * no timestamps (a writer switched in the middle of a buffer: record-writer-timestamps.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { NO_TIMESTAMP } from '../../../src/core/watermark.ts';
import { CollectSink, StreamEnvironment, WatermarkStrategy } from '../../../src/index.ts';
import type { KeyedProcessFunction } from '../../../src/index.ts';
import { newElementTimestamp } from '../../../src/runtime/time/element-timestamp.ts';
import { seen, values } from '../../support/values-source.ts';

describe('untimed event-time register', () => {
  it('calls its listeners once when marked timed, and at once when already timed', () => {
    const ts = newElementTimestamp();
    const calls: string[] = [];
    ts.onTimed(() => calls.push('a'));
    expect(ts.timed).toBe(false);
    ts.markTimed();
    ts.markTimed();
    ts.onTimed(() => calls.push('b'));
    expect(ts.timed).toBe(true);
    expect(calls).toEqual(['a', 'b']);
  });

  it('refuses to be marked timed after something wrote a timestamp into it untimed', () => {
    const ts = newElementTimestamp();
    ts.current = 5;
    expect(() => ts.markTimed()).toThrow(/written before markTimed/);
  });

  it('an assigner chained after a source without watermarks sees no previous timestamp on any record', async () => {
    const env = StreamEnvironment.create({ parallelism: 1, restartStrategy: { type: 'none' } });
    const previous: number[] = [];
    const sink = new CollectSink<string>();
    env
      .fromCollection([1, 2, 3, 4])
      .assignTimestampsAndWatermarks(
        WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((v, prev) => {
          previous.push(prev);
          return v * 100;
        }),
      )
      .process(seen('chained'))
      .sinkTo(sink);
    await env.execute('assigner-after-source');
    expect(previous).toEqual([NO_TIMESTAMP, NO_TIMESTAMP, NO_TIMESTAMP, NO_TIMESTAMP]);
    expect(sink.results()).toEqual(['chained:1:100', 'chained:2:200', 'chained:3:300', 'chained:4:400']);
  });

  it('timestamps from a source strategy cross two network edges (the middle subtask is marked timed by the buffers it receives), and a subtask fed without them sees none', async () => {
    const env = StreamEnvironment.create({ parallelism: 2, restartStrategy: { type: 'none' } });
    const timed = new CollectSink<string>();
    const untimed = new CollectSink<string>();
    env
      .fromSource(values(1, 2, 3), 'timed', {
        watermarks: WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((v) => v * 10),
      })
      .setParallelism(1)
      .rebalance()
      .map((v) => v) // a subtask whose own writer must forward the timestamps it received
      .rebalance()
      .process(seen('remote'))
      .sinkTo(timed);
    env.fromCollection([7, 8]).rebalance().process(seen('plain')).sinkTo(untimed);
    await env.execute('network-edges');
    expect(timed.results().sort()).toEqual(['remote:1:10', 'remote:2:20', 'remote:3:30']);
    expect(untimed.results().sort()).toEqual(['plain:7:undefined', 'plain:8:undefined']);
  });

  it("an event-time timer's output carries the timer's time although its subtask's input had none", async () => {
    const env = StreamEnvironment.create({ parallelism: 1, restartStrategy: { type: 'none' } });
    const sink = new CollectSink<string>();
    const timer: KeyedProcessFunction<string, number, number> = {
      processElement(v, ctx, out) {
        ctx.timerService().registerEventTimeTimer(1_000 + v);
        out.collect(v);
      },
      onTimer(t, _ctx, out) {
        out.collect(-t);
      },
    };
    env
      .fromCollection([1, 2])
      .keyBy((v) => String(v))
      .process(() => timer)
      .rebalance()
      .process(seen('after-timer'))
      .sinkTo(sink);
    await env.execute('timer-output');
    // The records have no event time; the end of input's maximum watermark fires both timers.
    expect(sink.results().sort()).toEqual(['after-timer:-1001:1001', 'after-timer:-1002:1002', 'after-timer:1:undefined', 'after-timer:2:undefined']);
  });
});
