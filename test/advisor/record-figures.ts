/**
 * Records the REST answers the advisor reads (`/checkpoints`, `/checkpoints/config`,
 * `/backpressure`) from a real run into test/advisor/fixtures/<name>.json. Not a test: run by hand,
 *
 *   nice -n 5 node --import tsx test/advisor/record-figures.ts <backpressure|quiet|timeouts> <seconds>
 *
 * backpressure: bench/lib/backpressure-job.ts (the benchmarks' backpressure scenario: sink slowed
 * to 20 000 records/s per subtask) aligned, interval 500 ms, timeout 3 s, as bench/scenarios/backpressure.ts;
 * quiet: a keyed count of 2 000 generated records/s into a discarding sink (in-thread), interval 500 ms;
 * timeouts: the same quiet job with interval 20 ms and timeout 2 ms, so checkpoints expire within
 * their interval without backpressure.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import build from '../../bench/lib/backpressure-job.ts';
import type { JobMaster } from '../../src/cluster/job-master/job-master.ts';
import { StreamEnvironment, type ValueState, ValueStateDescriptor } from '../../src/index.ts';
import { startWebServer } from '../../src/web/server.ts';

const [name = 'backpressure', seconds = '8'] = process.argv.slice(2);
const SETUPS: Record<string, { quiet: boolean; intervalMs: number; timeoutMs: number }> = {
  backpressure: { quiet: false, intervalMs: 500, timeoutMs: 3_000 },
  quiet: { quiet: true, intervalMs: 500, timeoutMs: 10_000 },
  timeouts: { quiet: true, intervalMs: 20, timeoutMs: 2 },
};

function quietJob(env: StreamEnvironment): void {
  env
    .generate({ count: 1_000_000, ratePerSec: 2_000 }, (i) => `k${i % 100}`)
    .uid('words')
    .keyBy((w) => w)
    .process(() => {
      let count: ValueState<number>;
      return {
        open(ctx) {
          count = ctx.getState(new ValueStateDescriptor<number>('count', 0));
        },
        processElement(word: string, _ctx, out) {
          const n = (count.value() ?? 0) + 1;
          count.update(n);
          out.collect(`${word}=${n}`);
        },
      };
    })
    .uid('count')
    .sinkTo({ name: 'discard', kind: 'plain', createWriter: () => ({ write: () => {} }) })
    .uid('discard');
}
const setup = SETUPS[name];
if (setup === undefined) throw new Error(`unknown setup ${name}`);
const dir = await mkdtemp(join(tmpdir(), 'weir-record-'));
try {
  process.env.BACKPRESSURE_SINK_RATE = '20000';
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointing: { intervalMs: setup.intervalMs, timeoutMs: setup.timeoutMs, tolerableFailures: 1_000_000 },
    checkpointStorage: dir,
    ...(setup.quiet ? { taskManagers: 'in-thread' as const } : {}),
  });
  if (setup.quiet) quietJob(env);
  else {
    build(env);
    env.setJobModule(fileURLToPath(new URL('../../bench/lib/backpressure-job.ts', import.meta.url)));
  }
  let master: JobMaster | null = null;
  const client = await env.executeAsync(`record-${name}`, { onJobMaster: (m) => (master = m) });
  const server = await startWebServer({ client, master: master as unknown as JobMaster, token: 'record', sampleIntervalMs: 200 });
  await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
  const get = async (route: string): Promise<unknown> => (await fetch(`${server.address}/jobs/${client.jobId}${route}`)).json();
  const recorded = {
    recorded: `${new Date().toISOString()}: node --import tsx test/advisor/record-figures.ts ${name} ${seconds}`,
    checkpoints: await get('/checkpoints'),
    config: await get('/checkpoints/config'),
    backpressure: await get('/backpressure'),
    advice: await get('/advice'),
  };
  await client.cancel();
  await server.close();
  await writeFile(join(import.meta.dirname, 'fixtures', `${name}.json`), `${JSON.stringify(recorded, null, 1)}\n`);
  console.log(JSON.stringify(recorded.advice, null, 2));
} finally {
  await rm(dir, { recursive: true, force: true });
}
