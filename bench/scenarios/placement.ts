/**
 * placement: what running a parallelism-1 job on one task manager (a worker thread, as `weir run`
 * does by default so that a stuck user function cannot freeze the control plane) costs against
 * running it in the executing thread (`taskManagers: 'in-thread'`). The job is the scaling
 * benchmark's keyed count (bench/lib/scaling-job.ts) at parallelism 1, the two ways interleaved:
 *
 *   p1_in_thread   every subtask in this thread
 *   p1_one_tm      one task manager on a worker thread, one slot (the default of a job module)
 *
 * Start-up is from `executeAsync` to the job's 'running' event (for p1_one_tm: starting the worker,
 * loading Weir and the job module in it, deploy, open); throughput counts records from 'running' to
 * the end. Both variants are verified: the sink must have received every record.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { StreamEnvironment } from '../../src/index.ts';
import build from '../lib/scaling-job.ts';
import { buildResult, median, parseScenarioArgs, printResult, seconds, writeResult } from '../lib/result.ts';

const SCENARIO = 'placement';
const JOB_MODULE = fileURLToPath(new URL('../lib/scaling-job.ts', import.meta.url));
const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  records: Number(process.env.PLACEMENT_BENCH_RECORDS ?? (args.quick ? 200_000 : 2_000_000)),
  rounds: Number(process.env.PLACEMENT_BENCH_ROUNDS ?? (args.quick ? 1 : 3)),
  keys: 10_000,
  statistic: 'start-up: ms from executeAsync to running; records/s from running to finished; medians over rounds; ratios: median of per-round ratios',
};

interface Outcome {
  readonly startupMs: number;
  readonly runMs: number;
}

async function runVariant(variant: string): Promise<Outcome> {
  process.env.SCALING_RECORDS = String(params.records);
  delete process.env.SCALING_THREAD_STATS;
  const dir = await mkdtemp(join(tmpdir(), 'weir-placement-'));
  const env = StreamEnvironment.create({
    parallelism: 1,
    checkpointStorage: dir,
    ...(variant === 'p1_in_thread' ? { taskManagers: 'in-thread' as const } : {}),
  });
  build(env);
  env.setJobModule(JOB_MODULE);
  const expected = variant === 'p1_in_thread' ? 0 : 1;
  const placed = env.taskManagerCount().taskManagers;
  if (placed !== expected) throw new Error(`${variant}: ${placed} task managers, expected ${expected}`);
  const start = performance.now();
  let running = 0;
  const client = await env.executeAsync(SCENARIO, {
    onEvent: (e) => {
      if (e.type === 'running') running = performance.now();
    },
  });
  await client.result;
  const end = performance.now();
  const received = client.metrics().recordsOut;
  await rm(dir, { recursive: true, force: true });
  if (received !== params.records) throw new Error(`${variant}: the sink received ${received} records, expected ${params.records}`);
  return { startupMs: running - start, runMs: end - running };
}

async function main(): Promise<void> {
  const variants = args.variants ?? ['p1_in_thread', 'p1_one_tm'];
  const runs = new Map<string, Outcome[]>(variants.map((v) => [v, []]));
  for (const v of variants) await runVariant(v); // warm-up of both paths
  for (let round = 0; round < params.rounds; round++) {
    // Alternate which variant goes first, so a drift in the machine's load is spread over both.
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      globalThis.gc?.();
      const o = await runVariant(v);
      runs.get(v)!.push(o);
      const rate = Math.round(params.records / (o.runMs / 1000)).toLocaleString('en-US');
      console.error(`round ${round + 1} ${v}: startup ${seconds(o.startupMs)}, run ${seconds(o.runMs)} (${rate} records/s) load ${loadavg()[0]!.toFixed(1)}`);
    }
  }
  if (args.variants !== null) return;
  const rate = (o: Outcome) => params.records / (o.runMs / 1000);
  const inThread = runs.get('p1_in_thread')!;
  const oneTm = runs.get('p1_one_tm')!;
  const result = buildResult(
    SCENARIO,
    { ...params, loadavg1: Number(loadavg()[0]!.toFixed(2)) },
    {
      in_thread_startup_ms: median(inThread.map((o) => o.startupMs)),
      one_tm_startup_ms: median(oneTm.map((o) => o.startupMs)),
      in_thread_records_per_s: median(inThread.map(rate)),
      one_tm_records_per_s: median(oneTm.map(rate)),
    },
    {
      throughput_one_tm_vs_in_thread: median(inThread.map((o, i) => rate(oneTm[i]!) / rate(o))),
      startup_extra_ms: median(inThread.map((o, i) => oneTm[i]!.startupMs - o.startupMs)),
    },
  );
  printResult(result);
  console.log(`written to ${writeResult(result, args.outDir)}`);
}

await main();
