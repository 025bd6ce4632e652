/** The README's job: a keyed word count with checkpoints every second. Run: npx tsx examples/word-count.ts */
import { CollectSink, StreamEnvironment, ValueStateDescriptor, type ValueState } from 'weir-stream';

const env = StreamEnvironment.create({ parallelism: 3, checkpointing: { intervalMs: 1000 }, checkpointStorage: './checkpoints' });
const counts = new CollectSink<string>();
env
  .generate({ count: 1_000_000, seed: 7 }, (i) => `word-${i % 1000}`)
  .uid('words')
  .keyBy((word) => word)
  .process(() => {
    let seen: ValueState<number>;
    return {
      open(ctx) {
        seen = ctx.getState(new ValueStateDescriptor<number>('seen', 0));
      },
      processElement(word, _ctx, out) {
        seen.update(seen.value()! + 1);
        out.collect(`${word}=${seen.value()}`);
      },
    };
  })
  .uid('count')
  .sinkTo(counts);
const result = await env.execute('word-count');
console.log(`${result.status}: ${counts.results().length} updates committed over ${result.checkpoints.length} checkpoints`);
