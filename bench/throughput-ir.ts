/**
 * Instruction counts per record of the throughput scenario's `weir` variant, for A/B comparisons of
 * engine trees that wall-clock rates on this shared machine cannot settle (per-round `weir_vs_loop`
 * varies 0.25-0.58 at load 1). Runs the same job as bench/scenarios/throughput.ts (generate -> keyBy
 * -> keyed ValueState count emitting [key, count] -> counting sink, parallelism 1, checkpointing
 * off) built from TREE's `src`, once with WARM records to warm the JIT, then with N records.
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node --single-threaded \
 *     --import tsx bench/throughput-ir.ts TREE N
 *
 * Instructions per record = (Ir(N2) - Ir(N1)) / (N2 - N1) from two runs of one tree with tsx's
 * transpile cache in the same (warm) state: process start, transpilation and warm-up cancel out.
 * `--single-threaded` keeps JIT compilation and GC on the main thread, so they are counted (V8's
 * helper threads made start-up vary by ~100 M instructions between identical runs).
 * The loop variant (`loop` as TREE) runs the scenario's hand-written loop instead, for the ratio.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type KeyAt = (index: number, seed: number) => string;

const WARM = 50_000;
const SEED = 42;

interface Engine {
  StreamEnvironment: {
    create(options: object): {
      generate(options: { count: number; seed: number }, produce: KeyAt): any;
      execute(name: string): Promise<{ status: string }>;
    };
  };
  ValueStateDescriptor: new (name: string, defaultValue: number) => object;
}

async function runWeir(engine: Engine, keyAt: KeyAt, records: number): Promise<number> {
  let received = 0;
  let sumOfCounts = 0;
  const env = engine.StreamEnvironment.create({ parallelism: 1, restartStrategy: { type: 'none' }, checkpointing: {}, checkpointStorage: 'memory' });
  env
    .generate({ count: records, seed: SEED }, keyAt)
    .uid('keys')
    .keyBy((key: string) => key)
    .process(() => {
      let count: { value(): number | undefined; update(n: number): void };
      return {
        open(ctx: { getState(d: object): typeof count }) {
          count = ctx.getState(new engine.ValueStateDescriptor('count', 0));
        },
        processElement(key: string, _ctx: unknown, out: { collect(r: [string, number]): void }) {
          const n = (count.value() ?? 0) + 1;
          count.update(n);
          out.collect([key, n]);
        },
      };
    })
    .uid('count')
    .sinkTo({
      name: 'counting-sink',
      kind: 'plain',
      createWriter: () => ({
        write(update: [string, number]) {
          received++;
          sumOfCounts += update[1];
        },
      }),
    })
    .uid('sink');
  const result = await env.execute('throughput-ir');
  if (result.status !== 'FINISHED' || received !== records) throw new Error(`weir job ended ${result.status} with ${received} of ${records} records`);
  return sumOfCounts;
}

function runLoop(keyAt: KeyAt, records: number): number {
  const counts = new Map<string, number>();
  for (let i = 0; i < records; i++) {
    const key = keyAt(i, SEED);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts.size;
}

const [treeArg, nArg] = process.argv.slice(2);
const records = Number(nArg);
if (!treeArg || !Number.isInteger(records) || records <= 0) throw new Error('usage: throughput-ir.ts TREE|loop N');
const tree = treeArg === 'loop' ? process.cwd() : resolve(treeArg);
const { zipfKeys } = (await import(pathToFileURL(`${tree}/bench/lib/zipf.ts`).href)) as { zipfKeys(v: number, s: number, seed: number): { keyAt: KeyAt } };
const { keyAt } = zipfKeys(10_000, 1, SEED);
if (treeArg === 'loop') {
  runLoop(keyAt, WARM);
  runLoop(keyAt, records);
} else {
  const engine = (await import(pathToFileURL(`${tree}/src/index.ts`).href)) as Engine;
  await runWeir(engine, keyAt, WARM);
  await runWeir(engine, keyAt, records);
}
