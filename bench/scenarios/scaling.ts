/**
 * scaling: a keyed count with a keyBy shuffle (bench/lib/scaling-job.ts), two ways, interleaved:
 *
 *   p1_in_thread   parallelism 1, every subtask in this thread (today's runtime)
 *   p2_two_tms     parallelism 2 on two task managers (worker threads); half the shuffled records
 *                  cross between them as serialized frames with credit-based flow control
 *
 * Rates count from the job's 'running' event to its end (worker start-up and module loading are
 * reported apart, as startup ms). Both variants are verified: the sinks must have received every
 * record. `scaling_p2_vs_p1` is the median of per-round ratios of wall-clock rates (goal >= 1.7 on
 * two cores); records per CPU-second (this process, all threads) are reported beside it, since
 * other load on a shared machine inflates wall time more than CPU time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { StreamEnvironment } from '../../src/index.ts';
import build from '../lib/scaling-job.ts';
import { buildResult, median, parseScenarioArgs, printResult, seconds, writeResult } from '../lib/result.ts';

const SCENARIO = 'scaling';
const JOB_MODULE = fileURLToPath(new URL('../lib/scaling-job.ts', import.meta.url));
const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  records: args.quick ? 400_000 : 4_000_000,
  rounds: args.quick ? 1 : 3,
  keys: 10_000,
  /** Buffers per channel (SCALING_CAPACITY, default the option's 8): a cross-thread channel needs enough to cover the credit round trip. */
  channelCapacity: Number(process.env.SCALING_CAPACITY ?? 8),
  statistic: 'records/s from running to finished: median over rounds; ratio: median of per-round ratios',
};

interface Outcome {
  readonly ms: number;
  readonly cpuMs: number;
  readonly startupMs: number;
}

async function runVariant(variant: string): Promise<Outcome> {
  process.env.SCALING_RECORDS = String(params.records);
  const dir = await mkdtemp(join(tmpdir(), 'weir-scaling-'));
  const p2 = variant === 'p2_two_tms';
  const env = StreamEnvironment.create({ parallelism: p2 ? 2 : 1, taskManagers: p2 ? 2 : 1, checkpointStorage: dir, channelCapacity: params.channelCapacity });
  build(env);
  env.setJobModule(JOB_MODULE);
  const start = performance.now();
  let running = 0;
  let cpuAtRunning = process.cpuUsage();
  const client = await env.executeAsync(SCENARIO, {
    onEvent: (e) => {
      if (e.type === 'running') {
        running = performance.now();
        cpuAtRunning = process.cpuUsage();
      }
    },
  });
  await client.result;
  const end = performance.now();
  const cpu = process.cpuUsage(cpuAtRunning);
  const received = client.metrics().recordsOut;
  await rm(dir, { recursive: true, force: true });
  if (received !== params.records) throw new Error(`${variant}: the sinks received ${received} records, expected ${params.records}`);
  return { ms: end - running, cpuMs: (cpu.user + cpu.system) / 1000, startupMs: running - start };
}

async function main(): Promise<void> {
  const variants = args.variants ?? ['p1_in_thread', 'p2_two_tms'];
  const runs = new Map<string, Outcome[]>(variants.map((v) => [v, []]));
  await runVariant('p1_in_thread'); // warm-up
  for (let round = 0; round < params.rounds; round++) {
    for (const v of variants) {
      globalThis.gc?.();
      const o = await runVariant(v);
      runs.get(v)!.push(o);
      console.error(
        `round ${round + 1} ${v}: ${seconds(o.ms)} (${Math.round(params.records / (o.ms / 1000)).toLocaleString('en-US')} records/s, cpu ${seconds(o.cpuMs)}, startup ${seconds(o.startupMs)}) load ${loadavg()[0]!.toFixed(1)}`,
      );
    }
  }
  if (args.variants !== null) return;
  const rate = (o: Outcome) => params.records / (o.ms / 1000);
  const cpuRate = (o: Outcome) => params.records / (o.cpuMs / 1000);
  const p1 = runs.get('p1_in_thread')!;
  const p2 = runs.get('p2_two_tms')!;
  const result = buildResult(
    SCENARIO,
    { ...params, loadavg1: Number(loadavg()[0]!.toFixed(2)) },
    {
      p1_records_per_s: median(p1.map(rate)),
      p2_records_per_s: median(p2.map(rate)),
      p1_records_per_cpu_s: median(p1.map(cpuRate)),
      p2_records_per_cpu_s: median(p2.map(cpuRate)),
      p2_startup_ms: median(p2.map((o) => o.startupMs)),
    },
    {
      scaling_p2_vs_p1: median(p1.map((o, i) => rate(p2[i]!) / rate(o))),
      cpu_efficiency_p2_vs_p1: median(p1.map((o, i) => cpuRate(p2[i]!) / cpuRate(o))),
    },
  );
  printResult(result);
  console.log(`written to ${writeResult(result, args.outDir)}`);
}

await main();
