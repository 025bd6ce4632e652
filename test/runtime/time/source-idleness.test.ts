import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../../src/core/adapters.ts';
import { CollectSink, POLL_END, POLL_MORE, StreamEnvironment, WatermarkStrategy } from '../../../src/index.ts';
import type { Clock, KeyedProcessFunction, Source, SourceReader } from '../../../src/index.ts';
import { SimWorld } from '../../../src/sim/world/sim-world.ts';

const RECORDS = 200;
const END_MS = 3_000;
const REJOIN_MS = 1_500;

/**
 * Subtask 0 emits RECORDS records (ts = 10 i), 10 per poll; subtask 1 emits only record 10 again
 * (ts 100, far behind by then) at REJOIN_MS. Both end at END_MS virtual ms.
 */
function oneActiveSubtask(): Source<number> {
  return {
    name: 'one-active',
    bounded: true,
    createReader(): SourceReader<number> {
      let clock: Clock;
      let subtask = 0;
      let next = 0;
      let rejoined = false;
      return {
        open(ctx) {
          clock = ctx.clock;
          subtask = ctx.subtaskIndex;
        },
        poll(out) {
          if (subtask === 0 && next < RECORDS) {
            for (let k = 0; k < 10 && next < RECORDS; k++) out.collect(next++);
            return { status: 'wait', delayMs: 5 };
          }
          if (subtask === 1 && !rejoined && clock.now() >= REJOIN_MS) {
            out.collect(10);
            rejoined = true;
            return POLL_MORE;
          }
          return clock.now() >= END_MS ? POLL_END : { status: 'wait', delayMs: 20 };
        },
        snapshotState() {},
        close() {},
      };
    },
  };
}

async function firingTimes(idleTimeoutMs: number | null): Promise<{ firedAtMs: number[]; output: string[] }> {
  const world = new SimWorld(3, { stepCostMsMax: 1, slowProbability: 0, slowDelayMsMax: 0 });
  const env = StreamEnvironment.create({ parallelism: 2, autoWatermarkIntervalMs: 5, restartStrategy: { type: 'none' } });
  let strategy = WatermarkStrategy.forMonotonousTimestamps<number>().withTimestampAssigner((i) => i * 10);
  if (idleTimeoutMs !== null) strategy = strategy.withIdleness(idleTimeoutMs);
  const firedAtMs: number[] = [];
  const backwards: string[] = [];
  let lastWatermark = Number.NEGATIVE_INFINITY;
  const sink = new CollectSink<string>();
  env
    .fromSource(oneActiveSubtask(), 'one-active', { watermarks: strategy })
    .keyBy((i) => i % 4)
    .process(
      (): KeyedProcessFunction<number, number, string> => ({
        processElement(_i, ctx) {
          ctx.timerService().registerEventTimeTimer(ctx.timestamp!);
        },
        onTimer(t, ctx, out) {
          firedAtMs.push(ctx.timerService().currentProcessingTime());
          const w = ctx.timerService().currentWatermark();
          if (w < lastWatermark) backwards.push(`${lastWatermark} -> ${w}`);
          lastWatermark = w;
          out.collect(`${ctx.currentKey}@${t}`);
        },
      }),
    )
    .uid('timers')
    .sinkTo(sink);
  const client = await env.executeAsync('idleness', { env: world.environment });
  let done = false;
  void client.result.finally(() => (done = true));
  while (!done) {
    world.step();
    await yieldToEventLoop();
  }
  expect((await client.result).status).toBe('FINISHED');
  expect(backwards).toEqual([]); // the watermark never goes back, not even when an idle input rejoins behind it
  return { firedAtMs, output: sink.results().sort() };
}

describe('source idleness (simulator clock)', () => {
  it('a silent source subtask holds the watermark back, unless it marks itself idle; rejoining behind, it does not move the watermark back', async () => {
    const held = await firingTimes(null);
    const idle = await firingTimes(20);
    const expected = Array.from({ length: RECORDS }, (_, i) => `${i % 4}@${i * 10}`).sort();
    // Held: record 10's second copy comes before the watermark passed 100: one timer (deduplicated).
    expect(held.output).toEqual(expected);
    // Idle: the timer at 100 had fired; the rejoining copy is late and its timer fires again at the end.
    expect(idle.output).toEqual([...expected, '2@100'].sort());
    // Without idleness no timer fires before the silent subtask sends its first record at REJOIN_MS.
    expect(Math.min(...held.firedAtMs)).toBeGreaterThanOrEqual(REJOIN_MS);
    // Idle after 20 ms: the active subtask alone drives the watermark, and its timers fire long before the end.
    expect(idle.firedAtMs.filter((t) => t < REJOIN_MS).length).toBeGreaterThan(RECORDS / 2);
  });
});
