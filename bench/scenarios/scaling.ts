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
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { StreamEnvironment } from '../../src/index.ts';
import build from '../lib/scaling-job.ts';
import type { ThreadShares } from '../lib/thread-stats.ts';
import { buildResult, median, parseScenarioArgs, printResult, seconds, writeResult } from '../lib/result.ts';

const SCENARIO = 'scaling';
const JOB_MODULE = fileURLToPath(new URL('../lib/scaling-job.ts', import.meta.url));
const args = parseScenarioArgs(process.argv.slice(2));
const params = {
  quick: args.quick,
  /** SCALING_BENCH_RECORDS overrides (a longer run shows how much of p2's extra CPU is the workers' JIT warm-up). */
  records: Number(process.env.SCALING_BENCH_RECORDS ?? (args.quick ? 400_000 : 4_000_000)),
  rounds: args.quick ? 1 : 3,
  keys: 10_000,
  /** Buffers per channel (SCALING_CAPACITY, default the option's 8): a cross-thread channel needs enough to cover the credit round trip. */
  channelCapacity: Number(process.env.SCALING_CAPACITY ?? 8),
  /** Buffers per channel between the task managers (SCALING_REMOTE_CAPACITY, default the option's 4 x channelCapacity). */
  remoteChannelCapacity: Number(process.env.SCALING_REMOTE_CAPACITY ?? 4 * Number(process.env.SCALING_CAPACITY ?? 8)),
  statistic: 'records/s from running to finished: median over rounds; ratio: median of per-round ratios',
};

interface Outcome {
  readonly ms: number;
  readonly cpuMs: number;
  readonly startupMs: number;
  /** Per thread running a sink subtask: shares of its wall time from first to last record. */
  readonly threads: ReadonlyArray<ThreadShares & { readonly records: number }>;
}

async function runVariant(variant: string): Promise<Outcome> {
  process.env.SCALING_RECORDS = String(params.records);
  const dir = await mkdtemp(join(tmpdir(), 'weir-scaling-'));
  const statsFile = join(dir, 'thread-stats.jsonl');
  process.env.SCALING_THREAD_STATS = statsFile;
  const p2 = variant === 'p2_two_tms';
  const env = StreamEnvironment.create({
    parallelism: p2 ? 2 : 1,
    taskManagers: p2 ? 2 : 'in-thread',
    checkpointStorage: dir,
    channelCapacity: params.channelCapacity,
    remoteChannelCapacity: params.remoteChannelCapacity,
  });
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
  const threads = await readThreadStats(statsFile);
  await rm(dir, { recursive: true, force: true });
  if (received !== params.records) throw new Error(`${variant}: the sinks received ${received} records, expected ${params.records}`);
  return { ms: end - running, cpuMs: (cpu.user + cpu.system) / 1000, startupMs: running - start, threads };
}

async function readThreadStats(file: string): Promise<Array<ThreadShares & { records: number }>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return []; // no procfs here
  }
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ThreadShares & { records: number });
}

/** CPU of the threads running subtasks (not V8's helper threads) per record from first to last record, in ns. */
function threadNsPerRecord(o: Outcome): number {
  const records = o.threads.reduce((n, t) => n + t.records, 0);
  const cpuMs = o.threads.reduce((n, t) => n + t.onCpu * t.wallMs, 0);
  return records === 0 ? Number.NaN : (cpuMs * 1e6) / records;
}

function medianOrNaN(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : median(values);
}

function percent(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}

function describeThreads(threads: readonly ThreadShares[]): string {
  return threads.map((t) => `cpu ${percent(t.onCpu)} runq ${percent(t.runqueue)} sleep ${percent(t.sleeping)}`).join(' | ');
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
        `round ${round + 1} ${v}: ${seconds(o.ms)} (${Math.round(params.records / (o.ms / 1000)).toLocaleString('en-US')} records/s, cpu ${seconds(o.cpuMs)}, startup ${seconds(o.startupMs)}) load ${loadavg()[0]!.toFixed(1)}; ${threadNsPerRecord(o).toFixed(0)} ns/record on the subtasks' threads: ${describeThreads(o.threads)}`,
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
      // Shares of a worker's wall time from its first to its last record (Linux schedstat; NaN elsewhere).
      p2_worker_sleeping_share: medianOrNaN(p2.flatMap((o) => o.threads.map((t) => t.sleeping))),
      p2_worker_runqueue_share: medianOrNaN(p2.flatMap((o) => o.threads.map((t) => t.runqueue))),
      p1_sleeping_share: medianOrNaN(p1.flatMap((o) => o.threads.map((t) => t.sleeping))),
      p1_thread_ns_per_record: medianOrNaN(p1.map(threadNsPerRecord)),
      p2_thread_ns_per_record: medianOrNaN(p2.map(threadNsPerRecord)),
    },
    {
      scaling_p2_vs_p1: median(p1.map((o, i) => rate(p2[i]!) / rate(o))),
      cpu_efficiency_p2_vs_p1: median(p1.map((o, i) => cpuRate(p2[i]!) / cpuRate(o))),
      // The same for the subtasks' threads alone, first to last record (no start-up, no V8 helper threads).
      thread_cpu_efficiency_p2_vs_p1: medianOrNaN(p1.map((o, i) => threadNsPerRecord(o) / threadNsPerRecord(p2[i]!))),
    },
  );
  printResult(result);
  console.log(`written to ${writeResult(result, args.outDir)}`);
}

await main();
