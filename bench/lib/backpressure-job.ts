/**
 * The backpressure benchmark's job module (each task manager loads it, so it is a module): two
 * generated sources keyed and connected into a keyed two-input counter, rebalanced into a sink
 * that admits BACKPRESSURE_SINK_RATE records per second per subtask (default 20,000) by waiting
 * for its time budget, as a slow external system would.
 */
import { performance } from 'node:perf_hooks';
import { type StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { KeyedCoProcessFunction, Sink, ValueState } from '../../src/index.ts';

interface Event {
  readonly key: number;
  readonly v: number;
}

/** Admits `rate` records per second: a sink writing to a slow external system. */
function slowSink(rate: number): Sink<unknown> {
  return {
    name: 'slow-sink',
    kind: 'plain',
    createWriter: () => {
      let admitted = 0;
      let start = -1;
      return {
        write: () => {
          const now = performance.now();
          if (start < 0) start = now;
          const due = start + (admitted * 1000) / rate;
          while (performance.now() < due) {
            // waiting for the external system's budget
          }
          admitted++;
        },
      };
    },
  };
}

export default function build(env: StreamEnvironment): void {
  const rate = Number(process.env.BACKPRESSURE_SINK_RATE ?? 20_000);
  const a = env.generate({ count: Infinity, seed: 1 }, (i): Event => ({ key: i % 1000, v: i })).uid('a');
  const b = env.generate({ count: Infinity, seed: 2 }, (i): Event => ({ key: (i * 7) % 1000, v: i })).uid('b');
  a.keyBy((e) => e.key)
    .connect(b.keyBy((e) => e.key))
    .process((): KeyedCoProcessFunction<number, Event, Event, number> => {
      let n: ValueState<number>;
      return {
        open(ctx) {
          n = ctx.getState(new ValueStateDescriptor<number>('n', 0));
        },
        processElement1(e, _ctx, out) {
          n.update(n.value()! + 1);
          out.collect(e.v);
        },
        processElement2(e, _ctx, out) {
          n.update(n.value()! + 1);
          out.collect(e.v);
        },
      };
    })
    .uid('count')
    .rebalance()
    .sinkTo(slowSink(rate))
    .uid('sink')
    .disableChaining();
}
