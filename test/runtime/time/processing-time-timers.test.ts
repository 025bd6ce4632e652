import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../../src/core/adapters.ts';
import { CollectSink, POLL_END, POLL_MORE, StreamEnvironment } from '../../../src/index.ts';
import type { Clock, KeyedProcessFunction, Source, SourceReader } from '../../../src/index.ts';
import { SimWorld } from '../../../src/sim/world/sim-world.ts';

const KEYS = 5;
const END_MS = 5_000;

/** Emits one record per key at once, then waits (virtual time) until END_MS and ends. */
function keysThenWait(): Source<string> {
  return {
    name: 'keys',
    bounded: true,
    createReader(): SourceReader<string> {
      let clock: Clock;
      let emitted = false;
      return {
        open(ctx) {
          clock = ctx.clock;
        },
        poll(out) {
          if (!emitted) {
            for (let k = 0; k < KEYS; k++) out.collect(`k${k}`);
            emitted = true;
            return POLL_MORE;
          }
          return clock.now() >= END_MS ? POLL_END : { status: 'wait', delayMs: 50 };
        },
        snapshotState() {},
        close() {},
      };
    },
  };
}

/** Registers a timer 1 s ahead twice (one timer), and one 0.5 s ahead that it deletes again. */
function delayed(): KeyedProcessFunction<string, string, string> {
  return {
    processElement(_k, ctx, out) {
      const ts = ctx.timerService();
      const now = ts.currentProcessingTime();
      ts.registerProcessingTimeTimer(now + 1_000);
      ts.registerProcessingTimeTimer(now + 1_000);
      ts.registerProcessingTimeTimer(now + 500);
      ts.deleteProcessingTimeTimer(now + 500);
      out.collect(`registered:${ctx.currentKey}:${now + 1_000}`);
    },
    onTimer(t, ctx, out) {
      const now = ctx.timerService().currentProcessingTime();
      out.collect(`fired:${ctx.currentKey}:${t}:${ctx.timeDomain}:late=${now - t >= 0 && now < END_MS ? 'ok' : now - t}:ts=${ctx.timestamp}`);
    },
  };
}

async function runSimulated(seed: number, stateBackend: 'heap' | 'embedded'): Promise<string[]> {
  const world = new SimWorld(seed, { stepCostMsMax: 2, slowProbability: 0.1, slowDelayMsMax: 5 });
  const env = StreamEnvironment.create({ parallelism: 2, stateBackend, restartStrategy: { type: 'none' } });
  const sink = new CollectSink<string>();
  env
    .fromSource(keysThenWait())
    .setParallelism(1)
    .keyBy((k) => k)
    .process(delayed)
    .uid('delayed')
    .sinkTo(sink);
  const client = await env.executeAsync('processing-time', { env: world.environment });
  let done = false;
  void client.result.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    world.step();
    await yieldToEventLoop();
  }
  expect((await client.result).status).toBe('FINISHED');
  expect(world.now()).toBeGreaterThanOrEqual(END_MS);
  return sink.results();
}

describe('processing-time timers on the simulator virtual clock', () => {
  it.each(['heap', 'embedded'] as const)('%s: each key fires once, at or after its time and before the end; a deleted timer never fires', async (backend) => {
    const out = await runSimulated(7, backend);
    const registered = out.filter((l) => l.startsWith('registered:'));
    const fired = out.filter((l) => l.startsWith('fired:'));
    expect(registered.length).toBe(KEYS);
    expect(fired.length).toBe(KEYS);
    for (const r of registered) {
      const [, key, at] = r.split(':');
      expect(fired).toContain(`fired:${key}:${at}:processing-time:late=ok:ts=undefined`);
    }
  });

  it('the same seed fires the same timers at the same virtual times', async () => {
    expect(await runSimulated(11, 'heap')).toEqual(await runSimulated(11, 'heap'));
  });
});
