import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment, WatermarkStrategy } from '../../src/index.ts';
import type { KeyedCoProcessFunction, WatermarkGenerator } from '../../src/index.ts';

interface Ev {
  readonly key: string;
  readonly ts: number;
}

const KEYS = 5;
const ev = (i: number, offset: number): Ev => ({ key: `k${i % KEYS}`, ts: offset + i * 10 });
const COUNT_A = 2_000;
const COUNT_B = 300;
const LAST_A = ev(COUNT_A - 1, 0).ts;
const LAST_B = ev(COUNT_B - 1, 5).ts;

/** Punctuated watermarks: every event emits its timestamp - 1 at once (no timing involved). */
function everyEvent(): WatermarkGenerator<Ev> {
  return {
    onEvent(_e, ts, out) {
      out.emitWatermark(ts - 1);
    },
    onPeriodicEmit() {},
  };
}

describe('event time on a two-input operator', () => {
  it('its watermark is the minimum of both inputs: a timer fires only once both inputs passed it', async () => {
    const env = StreamEnvironment.create({ parallelism: 1, restartStrategy: { type: 'none' } });
    const strategy = WatermarkStrategy.forGenerator(everyEvent).withTimestampAssigner((e: Ev) => e.ts);
    // Input A runs far ahead in event time; input B is slower (rate-limited) and starts later in event time.
    const a = env.generate({ count: COUNT_A }, (i) => ev(i, 0)).assignTimestampsAndWatermarks(strategy);
    const b = env.generate({ count: COUNT_B, ratePerSec: 3_000 }, (i) => ev(i, 5)).assignTimestampsAndWatermarks(strategy);
    const violations: string[] = [];
    let finiteFirings = 0;
    const sink = new CollectSink<string>();
    a.keyBy((e) => e.key)
      .connect(b.keyBy((e) => e.key))
      .process((): KeyedCoProcessFunction<string, Ev, Ev, string> => {
        let maxA = Number.NEGATIVE_INFINITY;
        let maxB = Number.NEGATIVE_INFINITY;
        return {
          processElement1(e, ctx) {
            maxA = Math.max(maxA, e.ts);
            ctx.timerService().registerEventTimeTimer(e.ts);
          },
          processElement2(e, ctx) {
            maxB = Math.max(maxB, e.ts);
            ctx.timerService().registerEventTimeTimer(e.ts);
          },
          onTimer(t, ctx, out) {
            const w = ctx.timerService().currentWatermark();
            if (Number.isFinite(w)) {
              finiteFirings++;
              // One subtask, FIFO channels: every record before a watermark was processed before it.
              // An input that sent its last record sent the maximum watermark after it.
              const limitA = maxA === LAST_A ? Number.POSITIVE_INFINITY : maxA - 1;
              const limitB = maxB === LAST_B ? Number.POSITIVE_INFINITY : maxB - 1;
              if (!(t <= w && w <= Math.min(limitA, limitB))) violations.push(`timer ${t} fired at watermark ${w}, inputs at ${maxA} and ${maxB}`);
            }
            out.collect(`${ctx.currentKey}@${t}`);
          },
        };
      })
      .uid('two-input-timers')
      .sinkTo(sink);
    const result = await env.execute('two-inputs');
    expect(result.status).toBe('FINISHED');
    expect(violations).toEqual([]);
    expect(finiteFirings).toBeGreaterThan(0);
    // Every (key, time) registered fired exactly once (timers are deduplicated per key and time).
    const expected = new Set<string>();
    for (let i = 0; i < COUNT_A; i++) expected.add(`${ev(i, 0).key}@${ev(i, 0).ts}`);
    for (let i = 0; i < COUNT_B; i++) expected.add(`${ev(i, 5).key}@${ev(i, 5).ts}`);
    expect([...sink.results()].sort()).toEqual([...expected].sort());
  });
});
