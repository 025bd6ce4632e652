/**
 * tcp: task managers as separate processes that join the job master over TCP (issue 24), against
 * worker-thread task managers and one thread. Every job runs from a job module that imports Weir
 * only through its public entries, so it can be bundled and shipped to the processes, which are
 * `node bin/weir.mjs taskmanager --connect` children of this process (the compiled dist/, rebuilt
 * first if stale; as `weir run --task-manager-processes` starts them: bench/lib/tcp-task-managers.ts).
 * Three parts, each with its own interleaved rounds (the order of the variants rotates every round):
 *
 *   shuffle       the scaling benchmark's keyed count (bench/lib/scaling-job.ts, keyBy shuffle):
 *                 p1_in_thread (parallelism 1 in this thread), p2_threads (parallelism 2 on two
 *                 worker-thread task managers), p2_tcp (parallelism 2 on two task manager processes)
 *   nexmark       q5 and q8 (examples/nexmark via bench/lib/nexmark-tcp-job.ts) at parallelism 1 on
 *                 one task manager process (tcp1) and at parallelism 2 on two (tcp2)
 *   backpressure  the backpressure benchmark's job (bench/lib/backpressure-job.ts) on two task
 *                 manager processes, aligned and unaligned checkpoints
 *
 *   npm run bench -- tcp [--quick] [--out DIR] [--variants shuffle,nexmark,backpressure]
 *
 * (--variants runs some parts only and writes no result file.) Rates count from the job's
 * 'running' event to its end, like scaling; start-up (bundling the job module, starting the
 * processes, joining, loading the code, deploying) is reported apart. CPU is this process's
 * (process.cpuUsage(), every thread: the job master, and the worker threads where there are any)
 * plus every task manager process's utime + stime from /proc/<pid>/stat over the same window, in
 * clock ticks of 10 ms. Bytes crossing between task managers are the job master's roster figures
 * (JobMaster.taskManagers(): payload bytes of the data frames each task manager sent and received,
 * reported with its final metrics). Ratios are medians of per-round ratios.
 *
 * Verification, failing the scenario loudly: the shuffle's sinks must receive every record and the
 * counts they receive must add up to the hand-computed sum (SCALING_CHECKSUM); each Nexmark run's
 * result digest must equal the plain reference computation's (bench/lib/nexmark-stream-reference.ts);
 * a backpressure run must complete checkpoints acknowledged by every subtask, unaligned ones holding
 * in-flight data and aligned ones none; every run on processes must have run on exactly the
 * processes this scenario started, each with subtasks, with data crossing between them (for a
 * finished job, bytes sent = bytes received), no restart, and every process must exit with code 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { StreamEnvironment } from '../../src/index.ts';
import type { JobResult } from '../../src/index.ts';
import type { JobMaster } from '../../src/cluster/job-master/job-master.ts';
import type { TaskManagerStatus } from '../../src/cluster/job-master/task-manager-roster.ts';
import type { CheckpointTrace } from '../../src/cluster/job-master/checkpoint-traces.ts';
import { generateClusterToken } from '../../src/cluster/transport/cluster-token.ts';
import { buildExecutionPlan, type ExecutionPlan } from '../../src/graph/execution-plan.ts';
import { sleep } from '../../src/core/adapters.ts';
import buildScaling, { KEYS } from '../lib/scaling-job.ts';
import buildBackpressure from '../lib/backpressure-job.ts';
import buildNexmark from '../lib/nexmark-tcp-job.ts';
import { addDigests, type Digest, type DigestedQuery, sameDigest } from '../lib/nexmark-digest.ts';
import { referenceDigest } from '../lib/nexmark-stream-reference.ts';
import { ownCpuMs, startTaskManagerProcesses, type TaskManagerProcesses } from '../lib/tcp-task-managers.ts';
import { buildResult, type Figures, median, parseScenarioArgs, printResult, runScenario, seconds, writeResult } from '../lib/result.ts';

const SCENARIO = 'tcp';
const lib = (file: string): string => fileURLToPath(new URL(`../lib/${file}`, import.meta.url));
const SCALING_MODULE = lib('scaling-job.ts');
const NEXMARK_MODULE = lib('nexmark-tcp-job.ts');
const BACKPRESSURE_MODULE = lib('backpressure-job.ts');

const PARTS = ['shuffle', 'nexmark', 'backpressure'] as const;
type Part = (typeof PARTS)[number];

const args = parseScenarioArgs(process.argv.slice(2));
const parts: readonly Part[] = (args.variants ?? PARTS).map((p) => {
  if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--variants takes parts of this scenario: ${PARTS.join(', ')}; got ${p}`);
  return p as Part;
});

const params = {
  quick: args.quick,
  parts,
  shuffle: {
    records: args.quick ? 400_000 : 4_000_000,
    keys: KEYS,
    rounds: args.quick ? 1 : 3,
    /** As scaling: 8 buffers per local channel, 4 x 8 between task managers. */
    channelCapacity: 8,
    remoteChannelCapacity: 32,
  },
  nexmark: {
    queries: ['q5', 'q8'] as DigestedQuery[],
    /** q5 costs about 1.7x what q8 does per event in one thread (BENCHMARKS.md, nexmark: 293k vs 487k events/CPU-s). */
    events: args.quick ? { q5: 20_000, q8: 20_000 } : { q5: 1_000_000, q8: 2_000_000 },
    rounds: args.quick ? 1 : 3,
    stateBackend: 'heap',
    checkpointIntervalMs: 10_000,
    checkpointMode: 'exactly-once',
  },
  backpressure: {
    runSeconds: args.quick ? 2 : 12,
    rounds: args.quick ? 1 : 2,
    parallelism: 2,
    sinkRecordsPerSecPerSubtask: 20_000,
    checkpointIntervalMs: 500,
    checkpointTimeoutMs: args.quick ? 3_000 : 10_000,
    bufferRecords: 64,
    channelCapacityBuffers: 64,
    remoteChannelCapacityBuffers: 64,
  },
  taskManagerProcess: 'node bin/weir.mjs taskmanager --connect 127.0.0.1:<port> --slots <parallelism> (compiled dist/)',
  cpu: 'process.cpuUsage() of this process (job master, worker threads) + utime/stime of each task manager process (/proc/<pid>/stat), running to finished',
  statistic: 'median over rounds; ratios: median of per-round ratios',
};

// ---------------------------------------------------------------------------------------------
// Running one job: in this process, on worker threads, or on task manager processes over TCP.

type Where = { readonly kind: 'local' } | { readonly kind: 'tcp'; readonly processes: number; readonly slots: number };

interface Run {
  readonly result: JobResult;
  readonly recordsOut: number;
  /** executeAsync to 'running'. */
  readonly startupMs: number;
  /** executeAsync to listening (the job module bundled); NaN when not on TCP. */
  readonly bundleMs: number;
  /** 'running' to the end of the job. */
  readonly runMs: number;
  /** CPU ms of this process from 'running' to the end. */
  readonly ownCpuMs: number;
  /** CPU ms of the task manager processes from 'running' to the end (0 when none). */
  readonly childCpuMs: number;
  /** CPU ms of the task manager processes from their start to 'running' (their start-up). */
  readonly childStartupCpuMs: number;
  /** CPU ms of the task manager processes over their whole lives. */
  readonly childLifeCpuMs: number;
  readonly pids: readonly number[];
  readonly roster: readonly TaskManagerStatus[];
  readonly traces: readonly CheckpointTrace[];
  /** Vertex index -> 'source' | 'count' | 'sink' (the backpressure job's stages). */
  readonly stageOf: ReadonlyMap<number, string>;
  readonly subtasks: number;
}

let cacheDir = '';

/**
 * Runs the job built on `env` (from `module`) and waits for its end. With `cancelAfterMs` (an
 * unbounded job: the backpressure part), it lets the job run that long from its 'running' event,
 * takes the job master's checkpoint traces, and cancels it.
 */
async function runJob(env: StreamEnvironment, module: string, name: string, where: Where, cancelAfterMs?: number): Promise<Run> {
  env.setJobModule(module);
  const token = generateClusterToken();
  const holder: { tms: TaskManagerProcesses | null; master: JobMaster | null } = { tms: null, master: null };
  const start = performance.now();
  let listenedAt = Number.NaN;
  let runningAt = Number.NaN;
  let ownAtRunning = 0;
  let childAtRunning = 0;
  let markRunning: () => void = () => {};
  const running = new Promise<void>((resolve) => (markRunning = resolve));
  try {
    const client = await env.executeAsync(name, {
      onJobMaster: (m) => (holder.master = m),
      onEvent: (e) => {
        if (e.type !== 'running' || e.attempt !== 0) return;
        runningAt = performance.now();
        ownAtRunning = ownCpuMs();
        childAtRunning = holder.tms?.cpuMs() ?? 0;
        markRunning();
      },
      ...(where.kind === 'tcp'
        ? {
            listen: {
              host: '127.0.0.1',
              port: 0,
              taskManagers: where.processes,
              token,
              onListening: (address: { host: string; port: number }) => {
                listenedAt = performance.now();
                holder.tms = startTaskManagerProcesses({ address, count: where.processes, slots: where.slots, token, cacheDir });
              },
            },
          }
        : {}),
    });
    let traces: readonly CheckpointTrace[] = [];
    const stageOf = new Map<number, string>();
    let subtasks = 0;
    if (cancelAfterMs !== undefined) {
      await Promise.race([running, client.result]);
      await sleep(cancelAfterMs);
      const master = holder.master as JobMaster | null;
      if (master === null) throw new Error(`${name}: no job master`);
      for (const t of master.tasks) stageOf.set(t.id.vertex, t.isSourceTask ? 'source' : t.name.includes('sink') ? 'sink' : 'count');
      subtasks = master.tasks.length;
      traces = master.traces.all();
      await client.cancel();
    }
    const result = await client.result;
    // Read at once: a task manager process ends soon after the job master lets it go.
    const end = performance.now();
    const ownEnd = ownCpuMs();
    const childEnd = holder.tms?.cpuMs() ?? 0;
    if (Number.isNaN(runningAt)) throw new Error(`${name}: ended ${result.status} without a 'running' event`);
    if (result.restarts !== 0) throw new Error(`${name}: the job restarted ${result.restarts} times`);
    const master = holder.master as JobMaster | null;
    if (cancelAfterMs === undefined) subtasks = master?.tasks.length ?? 0;
    const tms = holder.tms as TaskManagerProcesses | null;
    if (tms !== null) {
      // They end by themselves once the job master let them go (the job master gone, exit 0); stopped if not.
      if (!(await tms.endBy(10_000))) console.error(`[${SCENARIO}] ${name}: task manager processes still running 10 s after the job ended: stopping them`);
      await tms.stop();
      const ends = tms.ends();
      if (ends.some((e) => e !== 0))
        throw new Error(`${name}: the task manager processes ended with ${JSON.stringify(ends)}, expected exit code 0 (their output above says why)`);
    }
    const childLife = tms?.cpuMs() ?? 0;
    if (where.kind === 'tcp' && !(Number.isFinite(childEnd) && Number.isFinite(childLife)))
      throw new Error(`${name}: the task manager processes' CPU could not be read (needs Linux's /proc)`);
    return {
      result,
      recordsOut: client.metrics().recordsOut,
      startupMs: runningAt - start,
      bundleMs: listenedAt - start,
      runMs: end - runningAt,
      ownCpuMs: ownEnd - ownAtRunning,
      childCpuMs: childEnd - childAtRunning,
      childStartupCpuMs: childAtRunning,
      childLifeCpuMs: childLife,
      pids: tms?.pids ?? [],
      roster: master?.taskManagers() ?? [],
      traces,
      stageOf,
      subtasks,
    };
  } finally {
    await (holder.tms as TaskManagerProcesses | null)?.stop();
  }
}

function cpuMs(r: Run): number {
  return r.ownCpuMs + r.childCpuMs;
}

/**
 * Bytes the task managers sent each other, from the job master's roster. For a job that finished
 * they must equal the bytes received: each task manager reports its final figures before the job
 * master hears its last subtask finished. A canceled job's last reports are up to 100 ms apart.
 */
function crossingBytes(name: string, r: Run): number {
  const sent = r.roster.reduce((n, t) => n + t.data.bytesSent, 0);
  const received = r.roster.reduce((n, t) => n + t.data.bytesReceived, 0);
  if (r.result.status === 'FINISHED' && sent !== received)
    throw new Error(`${name}: the task managers sent ${sent} data bytes to each other but received ${received}`);
  return sent;
}

/** Fails unless the run's task managers are the `processes` processes this scenario started, each with subtasks and data crossing. */
function checkOnProcesses(name: string, r: Run, processes: number): void {
  const tcp = r.roster.filter((t) => t.description.transport === 'tcp');
  const pids = tcp.map((t) => t.description.pid).sort();
  const started = [...r.pids].sort();
  if (tcp.length !== processes || JSON.stringify(pids) !== JSON.stringify(started))
    throw new Error(
      `${name}: ran on task managers ${JSON.stringify(r.roster.map((t) => t.description))}, expected the ${processes} processes ${started.join(', ')}`,
    );
  for (const t of tcp) if (t.subtasks.length === 0) throw new Error(`${name}: task manager process ${t.description.pid} ran no subtask`);
  if (processes > 1 && crossingBytes(name, r) === 0) throw new Error(`${name}: no data crossed between the task manager processes`);
}

/** The variants of one part in round `round`'s order: rotated, so none always goes first. */
function rotated<T>(variants: readonly T[], round: number): T[] {
  const k = round % variants.length;
  return [...variants.slice(k), ...variants.slice(0, k)];
}

function perRoundRatio<V extends string>(runs: ReadonlyMap<V, Run[]>, a: V, b: V, figure: (r: Run) => number): number {
  const ra = runs.get(a)!;
  const rb = runs.get(b)!;
  return median(ra.map((r, i) => figure(r) / figure(rb[i]!)));
}

function load(): string {
  return `load ${loadavg()[0]!.toFixed(1)}`;
}

// ---------------------------------------------------------------------------------------------
// shuffle: the keyed count at p1 in this thread, at p2 on two worker threads, at p2 on two processes.

const SHUFFLE_VARIANTS = ['p1_in_thread', 'p2_threads', 'p2_tcp'] as const;
type ShuffleVariant = (typeof SHUFFLE_VARIANTS)[number];

/** Sum over keys of 1 + 2 + ... + c(key): what the counts the sinks receive must add up to. */
function expectedCountSum(records: number): number {
  const perKey = new Array<number>(KEYS).fill(0);
  for (let i = 0; i < records; i++) perKey[(i * 7919) % KEYS]!++;
  return perKey.reduce((sum, c) => sum + (c * (c + 1)) / 2, 0);
}

async function runShuffle(variant: ShuffleVariant, records: number, expectedSum: number): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-tcp-shuffle-'));
  try {
    const checksumFile = join(dir, 'checksum.jsonl');
    process.env.SCALING_RECORDS = String(records);
    process.env.SCALING_CHECKSUM = checksumFile;
    const p2 = variant !== 'p1_in_thread';
    const env = StreamEnvironment.create({
      parallelism: p2 ? 2 : 1,
      ...(variant === 'p2_tcp' ? {} : { taskManagers: p2 ? 2 : ('in-thread' as const) }),
      checkpointStorage: join(dir, 'checkpoints'),
      restartStrategy: { type: 'none' },
      channelCapacity: params.shuffle.channelCapacity,
      remoteChannelCapacity: params.shuffle.remoteChannelCapacity,
    });
    buildScaling(env);
    const name = `tcp-shuffle-${variant}`;
    const r = await runJob(env, SCALING_MODULE, name, variant === 'p2_tcp' ? { kind: 'tcp', processes: 2, slots: 2 } : { kind: 'local' });
    if (r.result.status !== 'FINISHED') throw new Error(`${name}: ended ${r.result.status}`);
    if (r.recordsOut !== records) throw new Error(`${name}: the sinks received ${r.recordsOut} records, expected ${records}`);
    const lines = (await readFile(checksumFile, 'utf8')).trim().split('\n');
    const parts = lines.map((l) => JSON.parse(l) as { records: number; countSum: number });
    const got = { records: parts.reduce((n, p) => n + p.records, 0), countSum: parts.reduce((n, p) => n + p.countSum, 0) };
    if (parts.length !== (p2 ? 2 : 1) || got.records !== records || got.countSum !== expectedSum)
      throw new Error(
        `${name}: the sink subtasks reported ${JSON.stringify(parts)}: ${got.records} records summing to ${got.countSum}, expected ${records} and ${expectedSum}`,
      );
    if (variant === 'p2_tcp') checkOnProcesses(name, r, 2);
    if (variant === 'p2_threads' && crossingBytes(name, r) === 0) throw new Error(`${name}: no data crossed between the worker threads`);
    return r;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function shufflePart(metrics: Figures, ratios: Figures): Promise<void> {
  const { records, rounds } = params.shuffle;
  const expectedSum = expectedCountSum(records);
  const runs = new Map<ShuffleVariant, Run[]>(SHUFFLE_VARIANTS.map((v) => [v, []]));
  // Warm-up: this process's JIT for the job master and p1, the file cache for the processes' start.
  for (const v of SHUFFLE_VARIANTS) await runShuffle(v, Math.round(records / 4), expectedCountSum(Math.round(records / 4)));
  const rate = (r: Run) => records / (r.runMs / 1000);
  const cpuRate = (r: Run) => records / (cpuMs(r) / 1000);
  for (let round = 0; round < rounds; round++) {
    for (const v of rotated(SHUFFLE_VARIANTS, round)) {
      globalThis.gc?.();
      const r = await runShuffle(v, records, expectedSum);
      runs.get(v)!.push(r);
      const crossing = v === 'p1_in_thread' ? '' : `, ${(crossingBytes(v, r) / 1e6).toFixed(1)} MB crossed`;
      console.error(
        `[${SCENARIO}] shuffle round ${round + 1} ${v}: ${seconds(r.runMs)} (${Math.round(rate(r)).toLocaleString('en-US')} records/s, cpu ${seconds(cpuMs(r))} of which task manager processes ${seconds(r.childCpuMs)}, startup ${seconds(r.startupMs)}${crossing}) ${load()}`,
      );
    }
  }
  for (const v of SHUFFLE_VARIANTS) {
    const rs = runs.get(v)!;
    metrics[`shuffle_${v}_records_per_s`] = median(rs.map(rate));
    metrics[`shuffle_${v}_records_per_cpu_s`] = median(rs.map(cpuRate));
    metrics[`shuffle_${v}_cpu_ns_per_record`] = median(rs.map((r) => (cpuMs(r) * 1e6) / records));
    if (v === 'p1_in_thread') continue;
    metrics[`shuffle_${v}_startup_ms`] = median(rs.map((r) => r.startupMs));
    metrics[`shuffle_${v}_crossing_mb_per_s`] = median(rs.map((r) => crossingBytes(v, r) / 1e6 / (r.runMs / 1000)));
    metrics[`shuffle_${v}_crossing_bytes_per_record`] = median(rs.map((r) => crossingBytes(v, r) / records));
  }
  const tcp = runs.get('p2_tcp')!;
  metrics.shuffle_p2_tcp_bundle_ms = median(tcp.map((r) => r.bundleMs));
  metrics.shuffle_p2_tcp_join_ms = median(tcp.map((r) => r.startupMs - r.bundleMs));
  metrics.shuffle_p2_tcp_processes_startup_cpu_ms = median(tcp.map((r) => r.childStartupCpuMs));
  metrics.shuffle_p2_tcp_processes_cpu_ms = median(tcp.map((r) => r.childCpuMs));
  metrics.shuffle_p2_tcp_processes_life_cpu_ms = median(tcp.map((r) => r.childLifeCpuMs));
  metrics.shuffle_p2_tcp_job_master_cpu_ms = median(tcp.map((r) => r.ownCpuMs));
  ratios.tcp_vs_threads_shuffle = perRoundRatio(runs, 'p2_tcp', 'p2_threads', rate);
  ratios.tcp_vs_threads_shuffle_per_cpu = perRoundRatio(runs, 'p2_tcp', 'p2_threads', cpuRate);
  ratios.scaling_p2_two_processes_vs_p1 = perRoundRatio(runs, 'p2_tcp', 'p1_in_thread', rate);
  ratios.cpu_efficiency_p2_two_processes_vs_p1 = perRoundRatio(runs, 'p2_tcp', 'p1_in_thread', cpuRate);
  ratios.scaling_p2_threads_vs_p1 = perRoundRatio(runs, 'p2_threads', 'p1_in_thread', rate);
}

// ---------------------------------------------------------------------------------------------
// nexmark: q5 and q8 on one task manager process (p1) and on two (p2).

const NEXMARK_VARIANTS = ['tcp1', 'tcp2'] as const;
type NexmarkVariant = (typeof NEXMARK_VARIANTS)[number];

async function runNexmark(query: DigestedQuery, variant: NexmarkVariant, events: number, expected: Digest): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-tcp-nexmark-'));
  try {
    const digestFile = join(dir, 'digest.jsonl');
    process.env.NEXMARK_TCP_QUERY = query;
    process.env.NEXMARK_TCP_EVENTS = String(events);
    process.env.NEXMARK_TCP_DIGEST = digestFile;
    const processes = variant === 'tcp1' ? 1 : 2;
    const env = StreamEnvironment.create({
      parallelism: processes,
      restartStrategy: { type: 'none' },
      checkpointing: { intervalMs: params.nexmark.checkpointIntervalMs, mode: 'exactly-once' },
      checkpointStorage: join(dir, 'checkpoints'),
      stateBackend: 'heap',
    });
    buildNexmark(env);
    const name = `tcp-nexmark-${query}-${variant}`;
    const r = await runJob(env, NEXMARK_MODULE, name, { kind: 'tcp', processes, slots: processes });
    if (r.result.status !== 'FINISHED') throw new Error(`${name}: ended ${r.result.status}`);
    const parts = (await readFile(digestFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Digest);
    const got = addDigests(parts);
    if (parts.length !== processes || !sameDigest(got, expected) || r.recordsOut !== expected.results)
      throw new Error(
        `${name}: results ${JSON.stringify(got)} (sinks counted ${r.recordsOut}) from ${parts.length} sink subtasks, the reference gives ${JSON.stringify(expected)}`,
      );
    checkOnProcesses(name, r, processes);
    return r;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function nexmarkPart(metrics: Figures, ratios: Figures): Promise<void> {
  for (const query of params.nexmark.queries) {
    const events = params.nexmark.events[query];
    const timer = performance.now();
    const expected = referenceDigest(query, events);
    console.error(`[${SCENARIO}] nexmark ${query}: reference ${expected.results} results from ${events} events in ${seconds(performance.now() - timer)}`);
    if (expected.results === 0) throw new Error(`nexmark ${query}: the reference gives no result for ${events} events`);
    const runs = new Map<NexmarkVariant, Run[]>(NEXMARK_VARIANTS.map((v) => [v, []]));
    const rate = (r: Run) => events / (r.runMs / 1000);
    const cpuRate = (r: Run) => events / (cpuMs(r) / 1000);
    for (let round = 0; round < params.nexmark.rounds; round++) {
      for (const v of rotated(NEXMARK_VARIANTS, round)) {
        globalThis.gc?.();
        const r = await runNexmark(query, v, events, expected);
        runs.get(v)!.push(r);
        console.error(
          `[${SCENARIO}] nexmark ${query} round ${round + 1} ${v}: ${seconds(r.runMs)} (${Math.round(rate(r)).toLocaleString('en-US')} events/s, ${Math.round(cpuRate(r)).toLocaleString('en-US')} events/CPU-s: job master ${seconds(r.ownCpuMs)} + task manager processes ${seconds(r.childCpuMs)}; startup ${seconds(r.startupMs)}) ${load()}`,
        );
      }
    }
    const prefix = `nexmark_${query}`;
    metrics[`${prefix}_events`] = events;
    metrics[`${prefix}_results`] = expected.results;
    for (const v of NEXMARK_VARIANTS) {
      const rs = runs.get(v)!;
      metrics[`${prefix}_${v}_events_per_s`] = median(rs.map(rate));
      metrics[`${prefix}_${v}_events_per_cpu_s`] = median(rs.map(cpuRate));
      metrics[`${prefix}_${v}_job_master_cpu_share`] = median(rs.map((r) => r.ownCpuMs / cpuMs(r)));
      metrics[`${prefix}_${v}_startup_ms`] = median(rs.map((r) => r.startupMs));
    }
    metrics[`${prefix}_tcp2_crossing_mb_per_s`] = median(runs.get('tcp2')!.map((r) => crossingBytes(prefix, r) / 1e6 / (r.runMs / 1000)));
    ratios[`${prefix}_tcp2_vs_tcp1_per_cpu`] = perRoundRatio(runs, 'tcp2', 'tcp1', cpuRate);
    ratios[`${prefix}_tcp2_vs_tcp1`] = perRoundRatio(runs, 'tcp2', 'tcp1', rate);
  }
}

// ---------------------------------------------------------------------------------------------
// backpressure: aligned and unaligned checkpoints under backpressure on two processes.

const BACKPRESSURE_MODES = ['aligned_tcp2', 'unaligned_tcp2'] as const;
type BackpressureMode = (typeof BACKPRESSURE_MODES)[number];
const STAGES = ['source', 'count', 'sink'] as const;
/** The job's two data hops: the keyed edges into the two-input counter, and the rebalance into the sink. */
const EDGES = [
  ['source', 'count'],
  ['count', 'sink'],
] as const;

interface BackpressureRun {
  readonly run: Run;
  readonly plan: ExecutionPlan;
  readonly completed: JobResult['checkpoints'];
  readonly all: JobResult['checkpoints'];
}

async function runBackpressure(mode: BackpressureMode): Promise<BackpressureRun> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-tcp-bp-'));
  const p = params.backpressure;
  const unaligned = mode.startsWith('unaligned');
  try {
    process.env.BACKPRESSURE_SINK_RATE = String(p.sinkRecordsPerSecPerSubtask);
    const env = StreamEnvironment.create({
      parallelism: p.parallelism,
      restartStrategy: { type: 'none' },
      checkpointing: {
        intervalMs: p.checkpointIntervalMs,
        timeoutMs: p.checkpointTimeoutMs,
        tolerableFailures: 1_000_000,
        ...(unaligned ? { unaligned: true } : {}),
      },
      checkpointStorage: join(dir, 'checkpoints'),
      bufferRecords: p.bufferRecords,
      channelCapacity: p.channelCapacityBuffers,
      remoteChannelCapacity: p.remoteChannelCapacityBuffers,
    });
    buildBackpressure(env);
    // The job master's plan is this function of the same graph: its channels in each subtask's input-gate order.
    const plan = buildExecutionPlan(env.jobGraph());
    const name = `tcp-backpressure-${mode}`;
    const run = await runJob(env, BACKPRESSURE_MODULE, name, { kind: 'tcp', processes: 2, slots: p.parallelism }, p.runSeconds * 1000);
    if (run.result.status !== 'CANCELED') throw new Error(`${name}: ended ${run.result.status}, expected CANCELED`);
    checkOnProcesses(name, run, 2);
    const all = run.result.checkpoints.filter((c) => c.status !== 'IN_PROGRESS');
    const completed = all.filter((c) => c.status === 'COMPLETED');
    if (completed.length === 0) throw new Error(`${name}: no checkpoint completed in ${p.runSeconds} s`);
    for (const c of completed) {
      if (c.subtasks.length !== run.subtasks)
        throw new Error(`${name}: checkpoint ${c.checkpointId} completed with ${c.subtasks.length} acknowledgements, the job has ${run.subtasks} subtasks`);
      const inflight = c.subtasks.reduce((n, s) => n + s.metrics.channelStateBytes, 0);
      const anyUnaligned = c.subtasks.some((s) => s.metrics.unaligned);
      if (!unaligned && (anyUnaligned || inflight !== 0))
        throw new Error(`${name}: aligned checkpoint ${c.checkpointId} persisted ${inflight} in-flight bytes`);
      if (unaligned && !anyUnaligned) throw new Error(`${name}: checkpoint ${c.checkpointId} was not unaligned`);
    }
    if (unaligned && median(completed.map((c) => c.subtasks.reduce((n, s) => n + s.metrics.channelStateBytes, 0))) === 0)
      throw new Error(`${name}: the unaligned checkpoints persisted no in-flight data: the channels were not backpressured`);
    return { run, plan, completed, all };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One completed checkpoint's course, from the job master's trace (every stamp on the job master's clock). */
interface Course {
  /** ms from the trigger until the last subtask of each stage started its sync phase, and until the last acknowledgement. */
  readonly cumulative: Record<string, number>;
  /** Per source subtask: trigger to its sync start (the trigger message from the job master's process to a task manager's, and a turn of the source's mailbox). */
  readonly triggerHops: number[];
  /**
   * Per channel of a data edge, `<edge>_<remote|local>`: from the producer's sync start (it emits the
   * barrier right after) until the consumer took the barrier from that channel. Remote: producer
   * and consumer in different task manager processes.
   */
  readonly dataHops: Record<string, number[]>;
  /** Per subtask: its sync start to its acknowledgement's arrival (sync and async phases, the ack message). */
  readonly syncToAck: number[];
}

function coursesOf(b: BackpressureRun): Course[] {
  const completed = new Set<number>(b.completed.map((c) => c.checkpointId));
  const key = (vertex: number, subtask: number) => `${vertex}.${subtask}`;
  const processOf = new Map<string, number>();
  for (const tm of b.run.roster) for (const s of tm.subtasks) processOf.set(key(s.vertex, s.subtask), tm.index);
  const channels = new Map(b.plan.channels.map((c) => [c.id, c]));
  const inputsOf = new Map(b.plan.subtasks.map((s) => [key(s.vertex, s.subtask), s.inputs]));
  const out: Course[] = [];
  for (const trace of b.run.traces) {
    if (!completed.has(trace.checkpointId) || trace.subtasks.length === 0) continue;
    const stageOf = (vertex: number) => b.run.stageOf.get(vertex);
    const syncStart = new Map(trace.subtasks.map((s) => [key(s.vertex, s.subtask), s.metrics.syncStartMs]));
    const cumulative: Record<string, number> = {};
    for (const stage of STAGES) {
      const starts = trace.subtasks.filter((s) => stageOf(s.vertex) === stage).map((s) => s.metrics.syncStartMs);
      if (starts.length > 0) cumulative[stage] = Math.max(...starts) - trace.triggeredAtMs;
    }
    cumulative.ack = Math.max(...trace.subtasks.map((s) => s.ackAtMs)) - trace.triggeredAtMs;
    const dataHops: Record<string, number[]> = {};
    for (const s of trace.subtasks) {
      const inputs = inputsOf.get(key(s.vertex, s.subtask)) ?? [];
      s.metrics.barrierArrivalsMs.forEach((arrival, i) => {
        const channel = channels.get(inputs[i]?.channel ?? '');
        if (arrival < 0 || channel === undefined) return;
        const sent = syncStart.get(key(channel.producer.vertex, channel.producer.subtask));
        if (sent === undefined) return;
        const edge = `${stageOf(channel.producer.vertex)}_${stageOf(channel.consumer.vertex)}`;
        const remote = processOf.get(key(channel.producer.vertex, channel.producer.subtask)) !== processOf.get(key(s.vertex, s.subtask));
        (dataHops[`${edge}_${remote ? 'remote' : 'local'}`] ??= []).push(arrival - sent);
      });
    }
    out.push({
      cumulative,
      triggerHops: trace.subtasks.filter((s) => stageOf(s.vertex) === 'source').map((s) => s.metrics.syncStartMs - trace.triggeredAtMs),
      dataHops,
      syncToAck: trace.subtasks.map((s) => s.ackAtMs - s.metrics.syncStartMs),
    });
  }
  return out;
}

async function backpressurePart(metrics: Figures, ratios: Figures): Promise<void> {
  const runs = new Map<BackpressureMode, BackpressureRun[]>(BACKPRESSURE_MODES.map((m) => [m, []]));
  for (let round = 0; round < params.backpressure.rounds; round++) {
    for (const mode of rotated(BACKPRESSURE_MODES, round)) {
      const b = await runBackpressure(mode);
      runs.get(mode)!.push(b);
      console.error(
        `[${SCENARIO}] backpressure round ${round + 1} ${mode}: ${b.completed.length}/${b.all.length} completed, median ${median(b.completed.map((c) => c.durationMs)).toFixed(1)} ms (startup ${seconds(b.run.startupMs)}) ${load()}`,
      );
    }
  }
  for (const mode of BACKPRESSURE_MODES) {
    const bs = runs.get(mode)!;
    const all = bs.flatMap((b) => b.all);
    const ok = bs.flatMap((b) => b.completed);
    const m = `bp_${mode}`;
    metrics[`${m}_duration_median_ms`] = median(ok.map((c) => c.durationMs));
    metrics[`${m}_duration_max_ms`] = Math.max(...ok.map((c) => c.durationMs));
    metrics[`${m}_completed_share`] = ok.length / all.length;
    metrics[`${m}_checkpoints_triggered`] = all.length;
    metrics[`${m}_inflight_bytes_median`] = median(ok.map((c) => c.subtasks.reduce((n, s) => n + s.metrics.channelStateBytes, 0)));
    const courses = bs.flatMap(coursesOf);
    if (courses.length === 0) throw new Error(`${mode}: the job master kept no trace of a completed checkpoint`);
    metrics[`${m}_traced_checkpoints`] = courses.length;
    for (const point of [...STAGES, 'ack']) {
      const values = courses.map((c) => c.cumulative[point]).filter((v): v is number => v !== undefined);
      if (values.length > 0) metrics[`${m}_trigger_to_last_${point}_ms`] = median(values);
    }
    metrics[`${m}_hop_trigger_to_source_ms`] = median(courses.flatMap((c) => c.triggerHops));
    const stamped: string[] = [];
    for (const [from, to] of EDGES) {
      for (const where of ['remote', 'local']) {
        const values = courses.flatMap((c) => c.dataHops[`${from}_${to}_${where}`] ?? []);
        stamped.push(`${from}->${to} ${where} ${values.length}`);
        // A subtask's acknowledgement carries the arrival of every channel's barrier (it leaves after the last), and
        // subtask i runs in process i, so both kinds exist on both edges: none means the traces lost the stamps.
        if (values.length === 0) throw new Error(`${mode}: no barrier arrival recorded on a ${where} ${from} -> ${to} channel`);
        metrics[`${m}_hop_${from}_to_${to}_${where}_ms`] = median(values);
      }
    }
    console.error(`[${SCENARIO}] backpressure ${mode}: ${courses.length} traced checkpoints; barrier stamps per channel kind: ${stamped.join(', ')}`);
    metrics[`${m}_sync_start_to_ack_ms`] = median(courses.flatMap((c) => c.syncToAck));
  }
  const aligned = runs.get('aligned_tcp2')!;
  const unaligned = runs.get('unaligned_tcp2')!;
  ratios.unaligned_speedup_tcp2 = median(
    aligned.map((a, i) => median(a.completed.map((c) => c.durationMs)) / median(unaligned[i]!.completed.map((c) => c.durationMs))),
  );
}

// ---------------------------------------------------------------------------------------------

/** The task manager processes run the compiled dist/: rebuilt here first when older than the sources, as the test setup does. */
function ensureBuilt(): void {
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  const r = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: repo, stdio: 'inherit' });
  if (r.status !== 0)
    throw new Error(`building dist/ for the task manager processes failed (node scripts/build.mjs --if-stale exited ${r.status ?? r.signal})`);
}

async function main(): Promise<void> {
  ensureBuilt();
  const started = performance.now();
  cacheDir = await mkdtemp(join(tmpdir(), 'weir-bench-tcp-code-'));
  const metrics: Figures = { loadavg_1m_at_start: Number(loadavg()[0]!.toFixed(2)) };
  const ratios: Figures = {};
  try {
    if (parts.includes('shuffle')) await shufflePart(metrics, ratios);
    if (parts.includes('nexmark')) await nexmarkPart(metrics, ratios);
    if (parts.includes('backpressure')) await backpressurePart(metrics, ratios);
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
  metrics.loadavg_1m_at_end = Number(loadavg()[0]!.toFixed(2));
  metrics.scenario_seconds = (performance.now() - started) / 1000;
  const result = buildResult(SCENARIO, params, metrics, ratios);
  printResult(result);
  // Some parts only (--variants): no result file, so it never replaces the full table.
  if (args.variants === null) console.log(`\nwritten to ${writeResult(result, args.outDir)}`);
}

runScenario(SCENARIO, main);
