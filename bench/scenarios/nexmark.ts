/**
 * nexmark: the Nexmark queries of examples/nexmark over the Nexmark generator, each on the heap and
 * the embedded state backend, checkpointing exactly-once every 10 s into a temporary directory,
 * at parallelism 1 in this thread, into a sink that only counts (the benchmark's blackhole sink).
 *
 *   npm run bench -- nexmark [--query q0,q3] [--events N] [--backend heap|embedded] [--quick]
 *
 * Per query and backend: events/s of wall time, and events per CPU-second — process.cpuUsage() of
 * this whole process (user + system, every thread: the job's thread, V8's GC helpers, lmdb's), which
 * is "per core used" and far less sensitive to the other load on a shared machine than wall time.
 * Ratios `nexmark_qN_vs_flink_per_core` set the embedded backend's events per CPU-second (the
 * like-for-like of Flink's RocksDB) beside Flink 1.13's published per-core figures;
 * `nexmark_qN_heap_vs_flink_per_core` does the same for the heap backend. Different hardware: the
 * ratio is still the figure a user asks for. The source generates the events inside the job, as
 * nexmark-flink's datagen source does, so generating them is part of every figure.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamEnvironment } from '../../src/index.ts';
import { buildResult, parseScenarioArgs, publishResult, runScenario, startTimer, writeResult, type Figures } from '../lib/result.ts';
import { NEXMARK_QUERIES, type NexmarkQuery } from '../lib/nexmark-queries.ts';
import { nexmarkStream } from '../../examples/nexmark/event-time.ts';

const SCENARIO = 'nexmark';
const BACKENDS = ['heap', 'embedded'] as const;
type Backend = (typeof BACKENDS)[number];

interface NexmarkArgs {
  readonly queries: readonly NexmarkQuery[];
  readonly events: number | null;
  readonly backends: readonly Backend[];
  readonly rest: string[];
}

function parseNexmarkArgs(argv: readonly string[]): NexmarkArgs {
  let queries: readonly NexmarkQuery[] = NEXMARK_QUERIES;
  let events: number | null = null;
  let backends: readonly Backend[] = BACKENDS;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--query') {
      const names = value().split(',');
      queries = names.map((n) => {
        const q = NEXMARK_QUERIES.find((x) => x.name === n);
        if (!q) throw new Error(`unknown query ${n} (known: ${NEXMARK_QUERIES.map((x) => x.name).join(', ')})`);
        return q;
      });
    } else if (arg === '--events') {
      events = Number(value());
      if (!Number.isInteger(events) || events < 1) throw new Error(`--events must be an integer >= 1, got ${argv[i]}`);
    } else if (arg === '--backend') {
      const b = value();
      if (b !== 'heap' && b !== 'embedded') throw new Error(`--backend must be heap or embedded, got ${b}`);
      backends = [b];
    } else rest.push(arg);
  }
  return { queries, events, backends, rest };
}

const nexmarkArgs = parseNexmarkArgs(process.argv.slice(2));
const args = parseScenarioArgs(nexmarkArgs.rest);
const QUICK_EVENTS = 20_000;

interface RunFigures {
  readonly events: number;
  readonly results: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly checkpoints: number;
}

async function runQuery(query: NexmarkQuery, backend: Backend, events: number): Promise<RunFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-nexmark-'));
  await mkdir(join(dir, 'local'));
  try {
    const env = StreamEnvironment.create({
      parallelism: 1,
      restartStrategy: { type: 'none' },
      checkpointing: { intervalMs: 10_000, mode: 'exactly-once' },
      checkpointStorage: join(dir, 'checkpoints'),
      stateBackend: backend,
      ...(backend === 'embedded' ? { incremental: true, embeddedState: { localDir: join(dir, 'local') } } : {}),
    });
    let results = 0;
    query
      .attach(nexmarkStream(env, { events }), {
        name: 'blackhole',
        kind: 'plain',
        createWriter: () => ({ write: () => void results++ }),
      })
      .uid('blackhole');
    (globalThis as { gc?: () => void }).gc?.();
    const stop = startTimer();
    const result = await env.execute(`bench-nexmark-${query.name}-${backend}`);
    const elapsed = stop();
    if (result.status !== 'FINISHED') throw new Error(`${query.name} on ${backend} ended ${result.status}`);
    const checkpoints = result.checkpoints.filter((c) => c.status === 'COMPLETED').length;
    return { events, results, wallMs: elapsed.ms, cpuMs: elapsed.cpuMs, checkpoints };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const metrics: Figures = {};
  const ratios: Figures = {};
  metrics.loadavg_1m_at_start = loadavg()[0] ?? 0;
  const subset = nexmarkArgs.queries.length < NEXMARK_QUERIES.length || nexmarkArgs.backends.length < BACKENDS.length || nexmarkArgs.events !== null;
  const params = {
    quick: args.quick,
    queries: nexmarkArgs.queries.map((q) => q.name),
    backends: nexmarkArgs.backends,
    events: Object.fromEntries(nexmarkArgs.queries.map((q) => [q.name, args.quick ? QUICK_EVENTS : (nexmarkArgs.events ?? q.events)])),
    parallelism: 1,
    checkpointIntervalMs: 10_000,
    checkpointMode: 'exactly-once',
    embedded: 'incremental checkpoints',
    cpu: 'process.cpuUsage(): user + system of the whole process, all threads',
    eventTime: 'dateTime, watermarks 4 s behind (nexmark-flink), 10,000 events per second of event time',
    flinkPerCore: Object.fromEntries(NEXMARK_QUERIES.map((q) => [q.name, q.flinkPerCore])),
    completed: [] as string[],
  };
  // A partial run (one query, one backend, other sizes) goes to its own file so it never replaces the full table.
  const name = subset && !args.quick ? `${SCENARIO}-${nexmarkArgs.queries.map((q) => q.name).join('-')}-${nexmarkArgs.backends.join('-')}` : SCENARIO;
  for (const query of nexmarkArgs.queries) {
    const events = args.quick ? QUICK_EVENTS : (nexmarkArgs.events ?? query.events);
    for (const backend of nexmarkArgs.backends) {
      const r = await runQuery(query, backend, events);
      const perCpuSec = r.events / (r.cpuMs / 1000);
      const prefix = `nexmark_${query.name}_${backend}`;
      metrics[`${prefix}_events`] = r.events;
      metrics[`${prefix}_results`] = r.results;
      metrics[`${prefix}_events_per_sec`] = r.events / (r.wallMs / 1000);
      metrics[`${prefix}_events_per_cpu_sec`] = perCpuSec;
      metrics[`${prefix}_cores_used`] = r.cpuMs / r.wallMs;
      metrics[`${prefix}_checkpoints`] = r.checkpoints;
      ratios[backend === 'embedded' ? `nexmark_${query.name}_vs_flink_per_core` : `nexmark_${query.name}_heap_vs_flink_per_core`] =
        perCpuSec / query.flinkPerCore;
      console.log(
        `${query.name} ${backend}: ${r.events} events -> ${r.results} results in ${(r.wallMs / 1000).toFixed(1)} s wall, ${(r.cpuMs / 1000).toFixed(1)} s CPU: ${Math.round(perCpuSec)} events/CPU-s (${(perCpuSec / query.flinkPerCore).toFixed(2)} x Flink 1.13 per core), ${r.checkpoints} checkpoints`,
      );
      // The figures so far are on disk after every run: a full run takes long on a loaded machine.
      params.completed.push(`${query.name}/${backend}`);
      if (!args.quick) writeResult(buildResult(name, params, metrics, ratios), args.outDir);
    }
  }
  publishResult(buildResult(name, params, metrics, ratios), args.outDir);
}

runScenario(SCENARIO, main);
