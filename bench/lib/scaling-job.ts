/**
 * The scaling benchmark's job module (each task manager loads it): a keyed count with a keyBy
 * shuffle. Record i is key `k<(i * 7919) mod KEYS>`; the count emits [key, n]; the sink counts what
 * it gets. SCALING_RECORDS sets the number of records.
 */
import { type StreamEnvironment, ValueStateDescriptor } from '../../src/index.ts';
import type { Sink, ValueState } from '../../src/index.ts';

export const KEYS = 10_000;

const countingSink: Sink<[string, number]> = {
  name: 'counting-sink',
  kind: 'plain',
  createWriter: () => ({
    write() {
      // counted by the sink operator (sinkRecordsIn)
    },
  }),
};

export default function build(env: StreamEnvironment): void {
  const records = Number(process.env.SCALING_RECORDS ?? 1_000_000);
  env
    .generate({ count: records }, (i) => `k${(i * 7919) % KEYS}`)
    .uid('keys')
    .keyBy((k) => k)
    .process(() => {
      let count: ValueState<number>;
      return {
        open(ctx) {
          count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
        },
        processElement(key: string, _ctx, out) {
          const n = count.value()! + 1;
          count.update(n);
          out.collect([key, n] as [string, number]);
        },
      };
    })
    .uid('count')
    .sinkTo(countingSink)
    .uid('sink');
}
