/**
 * Runs one seed: a real Weir job in the simulated world with faults drawn by the seed, then every
 * checker. The oracle is the same job and world without faults.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamEnvironment } from '../api/environment.ts';
import { yieldToEventLoop } from '../core/adapters.ts';
import { InjectedFault, StorageError, errorMessage } from '../core/errors.ts';
import { jobId } from '../core/ids.ts';
import { SeededRandom } from '../core/time.ts';
import type { JobMaster } from '../cluster/job-master.ts';
import type { JobEvent, JobResult } from '../cluster/job-events.ts';
import { checkOutput, type OutputRule } from './checkers/exactly-once.ts';
import { checkSequences } from './checkers/per-key-sequence.ts';
import { checkSnapshot } from './checkers/snapshot-consistency.ts';
import { checkStorage } from './checkers/storage.ts';
import { isDeletedReuseFailure } from '../checkpoint/coordinator/shared-state.ts';
import { FaultyStorage } from './faulty-storage.ts';
import { RandomFaults } from './random-faults.ts';
import { buildScenario, ScenarioSinks, SequenceLog, type BuiltScenario, type ScenarioName } from './scenarios.ts';
import type { JobClient } from '../api/environment.ts';
import type { StreamEnvironmentOptions } from '../api/options.ts';
import { SimRpc } from './sim-rpc.ts';
import { SimWorld } from './sim-world.ts';

/** Checkpointing modes the simulator runs: aligned exactly-once, at-least-once, unaligned, aligned with a timeout. */
export type SimMode = 'exactly-once' | 'at-least-once' | 'unaligned' | 'aligned-timeout';
export const SIM_MODES: readonly SimMode[] = ['exactly-once', 'at-least-once', 'unaligned', 'aligned-timeout'];

/** The guarantee a mode gives: every mode but at-least-once is exactly-once. */
export function guarantee(mode: SimMode): 'exactly-once' | 'at-least-once' {
  return mode === 'at-least-once' ? 'at-least-once' : 'exactly-once';
}

/** A user's job module to simulate: its default export builds the job; its sinks are observed. */
export interface SimJobModule {
  readonly name: string;
  readonly path: string;
  readonly options: StreamEnvironmentOptions;
  readonly build: (env: StreamEnvironment) => void | Promise<void>;
  /** How its committed output is compared with the fault-free run (default: multiset). */
  readonly outputRule?: OutputRule;
}

/** What a seed runs: a built-in scenario or a user's job module. */
export type SimJob = ScenarioName | SimJobModule;

export function jobName(job: SimJob): string {
  return typeof job === 'string' ? job : job.path;
}
export type OutcomeKind = 'ok' | 'violation' | 'liveness' | 'crash';

export interface SeedOutcome {
  readonly seed: number;
  readonly scenario: string;
  readonly mode: SimMode;
  readonly kind: OutcomeKind;
  /** Checker name -> what it found; empty when the seed passed. */
  readonly failures: ReadonlyArray<{ checker: string; messages: string[] }>;
  readonly traceHash: string;
  readonly stats: {
    readonly steps: number;
    readonly virtualMs: number;
    readonly restarts: number;
    readonly checkpointsCompleted: number;
    readonly taskFaults: number;
    readonly storageFaults: number;
    readonly messagesLost: number;
    readonly committed: number;
    /** Completed checkpoints that persisted in-flight data (unaligned). */
    readonly inflightCheckpoints: number;
    /** 1 when the seed stopped with a savepoint and resumed from it at another parallelism. */
    readonly rescaled: number;
  };
}

const MAX_STEPS = 3_000_000;
const MAX_VIRTUAL_MS = 120_000;

interface RunOptions {
  /** Receives a line per job event (replaying a seed with --trace). */
  readonly trace?: (line: string) => void;
  readonly seed: number;
  readonly scenario: SimJob;
  readonly mode: SimMode;
  readonly faults: boolean;
}

interface RawRun {
  readonly committed: string[];
  readonly settled: { result: JobResult } | { error: unknown } | null;
  readonly world: SimWorld;
  readonly problems: Map<string, string[]>;
  readonly faults: RandomFaults;
  readonly storage: FaultyStorage;
  readonly rpc: SimRpc;
  readonly unexpected: string[];
  readonly restarts: number;
  readonly storages: FaultyStorage[];
  /** Whether the seed stopped with a savepoint and resumed at another parallelism. */
  readonly rescaled: boolean;
}

function describeEvent(e: JobEvent): string {
  switch (e.type) {
    case 'checkpoint-completed':
    case 'checkpoint-failed':
      return `${e.type} ${e.stats.kind} ${e.stats.checkpointId}${e.stats.isFinal ? ' (final)' : ''}${e.stats.failureReason ? ` ${e.stats.failureReason}` : ''}`;
    case 'restarting':
      return `restarting attempt ${e.attempt}: ${e.cause}`;
    case 'running':
      return `running attempt ${e.attempt}${e.restoredFrom !== null ? ` from ${e.restoredFrom}` : ''}`;
    case 'failed':
      return `failed: ${e.error.message}`;
    case 'log':
      return `log: ${e.message}`;
    case 'restore-fallback':
      return `restore-fallback: ${e.reason}`;
    default:
      return e.type;
  }
}

/** Roots of an error chain (wrapping errors keep the original as cause). */
function rootCause(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 10 && e instanceof Error && e.cause !== undefined; i++) e = e.cause;
  return e;
}

function isExpectedFailure(err: unknown): boolean {
  for (let e: unknown = err, i = 0; i < 10 && e !== undefined; i++) {
    if (e instanceof InjectedFault) return true;
    if (e instanceof StorageError && e.code === 'STORAGE_IO') return true;
    if (e instanceof Error && e.message.includes('consecutive checkpoint failures')) return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}

/** Option values a seed draws once; both runs of a rescaling seed use them. */
interface Drawn {
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly maxConcurrent: number;
  readonly retained: number;
  readonly alignedTimeoutMs: number;
  readonly restartDelayMs: number;
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  /** issue 5: which state backend the seed runs (drawn from a stream of its own, so older draws keep their values). */
  readonly backend: SimBackend;
}

/** The state backends a seed may run: heap, embedded with full checkpoints, embedded incremental. */
export type SimBackend =
  | { readonly kind: 'heap' }
  | { readonly kind: 'embedded-full' | 'embedded-incremental'; readonly cacheEntriesMax: number; readonly incrementsShareMax: number };

/** A tiny cache forces eviction to the store; a small share forces frequent new bases. */
function drawBackend(seed: number): SimBackend {
  const r = new SeededRandom(seed ^ 0x0bac4e7d);
  const kind = (['heap', 'embedded-full', 'embedded-incremental'] as const)[r.int(3)]!;
  if (kind === 'heap') return { kind };
  return { kind, cacheEntriesMax: 2 + r.int(40), incrementsShareMax: [0.25, 1, 4][r.int(3)]! };
}

function stateBackendOptions(b: SimBackend): Pick<StreamEnvironmentOptions, 'stateBackend' | 'incremental' | 'embeddedState'> {
  if (b.kind === 'heap') return { stateBackend: 'heap' };
  return { stateBackend: 'embedded', incremental: b.kind === 'embedded-incremental', embeddedState: { cacheEntriesMax: b.cacheEntriesMax, incrementsShareMax: b.incrementsShareMax } };
}

function environmentFor(o: RunOptions, d: Drawn, parallelism: number): StreamEnvironment {
  const user = typeof o.scenario === 'string' ? null : o.scenario;
  return StreamEnvironment.create({
    ...(user?.options.stateBackend === undefined ? stateBackendOptions(d.backend) : {}),
    ...(user ? { ...user.options, checkpointStorage: undefined, jobId: undefined } : {}),
    parallelism,
    maxParallelism: user?.options.maxParallelism ?? d.maxParallelism,
    checkpointing: {
      intervalMs: d.intervalMs,
      mode: guarantee(o.mode),
      timeoutMs: d.timeoutMs,
      maxConcurrent: o.mode === 'unaligned' || o.mode === 'aligned-timeout' ? 1 : d.maxConcurrent,
      tolerableFailures: 1_000_000,
      retained: d.retained,
      ...(o.mode === 'unaligned' ? { unaligned: true } : {}),
      ...(o.mode === 'aligned-timeout' ? { unaligned: true, alignedCheckpointTimeoutMs: d.alignedTimeoutMs } : {}),
    },
    restartStrategy: { type: 'fixed-delay', attempts: 1_000_000, delayMs: d.restartDelayMs },
    bufferRecords: d.bufferRecords,
    channelCapacity: d.channelCapacity,
    jobId: 'sim',
  });
}

const SAVEPOINT_ROOT = 'memory:savepoints';

async function runOnce(o: RunOptions): Promise<RawRun> {
  const params = new SeededRandom(o.seed ^ 0x5eed5eed);
  const world = new SimWorld(o.seed, { stepCostMsMax: 0.05, slowProbability: o.faults ? 0.05 : 0, slowDelayMsMax: 3 });
  const parallelism = 1 + params.int(3);
  const spec = { parallelism, count: 200 + params.int(1000), keysPerSplit: 1 + params.int(6), ratePerSec: 0 };
  const durationMs = 100 + params.int(300);
  spec.ratePerSec = Math.ceil((spec.count * 1000) / durationMs);
  const user = typeof o.scenario === 'string' ? null : o.scenario;
  const drawn: Drawn = {
    parallelism: user?.options.parallelism ?? parallelism,
    // At least the job's own parallelism (a module may fix it above the drawn one).
    maxParallelism: Math.max([parallelism, 8, 128][params.int(3)]!, user?.options.parallelism ?? parallelism),
    intervalMs: 5 + params.int(40),
    timeoutMs: 60 + params.int(300),
    maxConcurrent: 1 + params.int(2),
    retained: 1 + params.int(3),
    alignedTimeoutMs: 1 + params.int(20),
    restartDelayMs: params.int(20),
    bufferRecords: 1 + params.int(16),
    channelCapacity: 1 + params.int(4),
    backend: drawBackend(o.seed),
  };
  const sinkDir = o.scenario === 'file-sink' ? mkdtempSync(join(tmpdir(), 'weir-sim-')) : null;
  const sinks = new ScenarioSinks(sinkDir);
  const log = new SequenceLog();
  const p = (x: number) => (o.faults ? x : 0);
  const faults = new RandomFaults(world.random, { process: p(0.01), 'sync-phase': p(0.05), 'async-phase': p(0.05), 'before-ack': p(0.05), commit: p(0.05) }, 8);
  const files = new Map<string, Uint8Array>();
  const storageFaults = { writeFailProbability: p(0.04), tornWriteProbability: p(0.04), renameFailProbability: p(0.05), latencyMsMax: 2 };
  const storages: FaultyStorage[] = [];
  const rpc = new SimRpc(world, { delayProbability: p(0.1), delayMsMax: 20, lossProbability: p(0.04) });
  const problems = new Map<string, string[]>();
  const add = (checker: string, messages: string[]) => {
    if (messages.length > 0) problems.set(checker, [...(problems.get(checker) ?? []), ...messages].slice(0, 20));
  };
  const unexpected: string[] = [];
  const snapshotChecks: Array<Promise<void>> = [];
  let restarts = 0;
  let master: JobMaster | null = null;
  const faultWindowMs = durationMs * (0.3 + params.next() * 0.7);
  world.schedule(faultWindowMs, () => {
    faults.active = false;
    for (const st of storages) st.active = false;
    rpc.active = false;
    world.slowActive = false;
  });
  if (o.faults) {
    for (let i = params.int(3); i > 0; i--) {
      world.schedule(params.next() * faultWindowMs, () => master?.failGlobal(new InjectedFault('coordinator restarts the job')));
    }
  }
  // Some seeds stop with a savepoint part-way and resume from it at another parallelism.
  const rescaleTo = 1 + params.int(Math.min(4, drawn.maxParallelism));
  const rescaleAtMs = params.next() * durationMs;
  const rescale = o.faults && params.next() < 0.35 && rescaleTo !== drawn.parallelism;

  const runJob = async (jobParallelism: number, restoreFrom: string | undefined, onStarted: (client: JobClient) => void): Promise<RawRun['settled']> => {
    const env = environmentFor(o, drawn, jobParallelism);
    const scenario = user ? await buildUserJob(user, env, sinks) : buildScenario(o.scenario as ScenarioName, env, spec, log, guarantee(o.mode) === 'exactly-once' ? 'exact' : 'no-skip', sinks);
    const storage = new FaultyStorage(jobId('sim'), world, { ...storageFaults, ...(storages[0]?.active === false ? { writeFailProbability: 0, tornWriteProbability: 0, renameFailProbability: 0 } : {}) }, files);
    storage.active = storages.length === 0 || storages[0]!.active;
    storages.push(storage);
    let settled: RawRun['settled'] = null;
    const client = await env.executeAsync('sim', {
      env: world.environment,
      faults,
      rpc,
      storage,
      restoreFrom,
      elementsPerStep: 1 + (o.seed % 4),
      sourceBatchRecords: 1 + (o.seed % 8),
      onJobMaster: (m) => {
        master = m;
        storage.retained = () => new Set(m.checkpointCoordinator.store.all().map((c) => c.checkpointId));
        storage.retainedLocations = () => new Set(m.checkpointCoordinator.store.all().map((c) => c.location));
      },
      onEvent: (e) => {
        if (o.trace) o.trace(`${world.now().toFixed(1)}ms ${describeEvent(e)}`);
        if (e.type === 'restarting') {
          restarts++;
          if (!isExpectedFailure(e.error)) unexpected.push(`restart caused by an error no fault explains: ${errorMessage(rootCause(e.error))}`);
        }
        // issue 5: the shared-state registry must never delete a file a later checkpoint still reuses.
        if (e.type === 'checkpoint-failed' && isDeletedReuseFailure(e.stats.failureMessage)) add('storage', [e.stats.failureMessage!]);
        if (e.type === 'checkpoint-completed' && e.stats.location) {
          const location = e.stats.location;
          snapshotChecks.push(
            storage.inner
              .readMetadata(location)
              .then((meta) => checkSnapshot(meta, scenario, guarantee(o.mode), (h) => storage.inner.readState(h)))
              .then((msgs) => add('snapshot-consistency', msgs))
              .catch((err: unknown) => add('snapshot-consistency', [`could not read checkpoint at ${location}: ${errorMessage(err)}`])),
          );
        }
      },
    });
    client.result.then(
      (result) => (settled = { result }),
      (error: unknown) => (settled = { error }),
    );
    onStarted(client);
    while (settled === null && world.steps < MAX_STEPS && world.now() < MAX_VIRTUAL_MS) {
      if (!world.step()) {
        await yieldToEventLoop();
        if (world.idle && settled === null) break;
        continue;
      }
      await yieldToEventLoop();
    }
    return settled;
  };

  let savepoint: string | null = null;
  let settled = await runJob(drawn.parallelism, undefined, (client) => {
    if (!rescale) return;
    world.schedule(rescaleAtMs, () => {
      client.stopWithSavepoint(SAVEPOINT_ROOT).then(
        (location) => (savepoint = location),
        () => {}, // the stop failed (a fault): the job goes on
      );
    });
  });
  let rescaled = false;
  if (settled !== null && 'result' in settled && savepoint !== null) {
    rescaled = true;
    settled = await runJob(rescaleTo, savepoint, () => {});
  }
  await Promise.all(snapshotChecks);
  add('per-key-sequence', checkSequences(log));
  const finished = settled !== null && 'result' in settled;
  const committed = finished ? sinks.committed(user !== null) : [];
  if (finished) add('storage', storages.flatMap((st) => checkStorage(st)));
  if (sinkDir) rmSync(sinkDir, { recursive: true, force: true });
  return { committed, settled, world, problems, faults, storage: storages[storages.length - 1]!, storages, rpc, unexpected, restarts, rescaled };
}

/** Runs a user's job with every sink replaced by an in-memory transactional one (kept across runs), so its commits can be compared. */
async function buildUserJob(job: SimJobModule, env: StreamEnvironment, sinks: ScenarioSinks): Promise<BuiltScenario> {
  await job.build(env);
  env.replaceSinks((uid) => sinks.forUid(uid));
  return { sources: [], keyed: null, committed: () => sinks.committed(true) };
}

const oracles = new Map<string, string[]>();

export async function runSeed(seed: number, scenario: SimJob, mode: SimMode, trace?: (line: string) => void): Promise<SeedOutcome> {
  const key = `${seed}/${jobName(scenario)}/${mode}`;
  let oracle = oracles.get(key);
  if (!oracle) {
    const clean = await runOnce({ seed, scenario, mode, faults: false });
    if (!clean.settled || !('result' in clean.settled)) {
      throw new Error(`seed ${seed}: the fault-free oracle run did not finish: ${clean.settled ? errorMessage((clean.settled as { error: unknown }).error) : 'no progress'}`);
    }
    oracle = clean.committed;
    oracles.set(key, oracle);
  }
  const run = await runOnce({ seed, scenario, mode, faults: true, trace });
  const failures: Array<{ checker: string; messages: string[] }> = [];
  let kind: OutcomeKind = 'ok';
  if (run.unexpected.length > 0) {
    failures.push({ checker: 'crash', messages: run.unexpected.slice(0, 5) });
    kind = 'crash';
  }
  if (run.settled === null) {
    failures.push({ checker: 'liveness', messages: [`the job did not finish after faults stopped (${run.world.steps} steps, ${Math.round(run.world.now())} virtual ms)`] });
    if (kind === 'ok') kind = 'liveness';
  } else if ('error' in run.settled) {
    failures.push({ checker: 'crash', messages: [`the job failed: ${errorMessage(run.settled.error)}`] });
    kind = 'crash';
  } else {
    const output = checkOutput(guarantee(mode), run.committed, oracle, typeof scenario === 'string' ? undefined : scenario.outputRule);
    if (output.length > 0) run.problems.set('exactly-once-output', output);
  }
  for (const [checker, messages] of run.problems) {
    failures.push({ checker, messages });
    if (kind === 'ok') kind = 'violation';
  }
  run.world.mix(run.committed.length);
  return {
    seed,
    scenario: jobName(scenario),
    mode,
    kind,
    failures,
    traceHash: run.world.traceHash,
    stats: {
      steps: run.world.steps,
      virtualMs: Math.round(run.world.now()),
      restarts: run.restarts,
      checkpointsCompleted: run.settled && 'result' in run.settled ? run.settled.result.checkpoints.filter((c) => c.status === 'COMPLETED').length : 0,
      taskFaults: run.faults.fired.length,
      storageFaults: run.storage.injected.writeFail + run.storage.injected.torn + run.storage.injected.renameFail,
      messagesLost: run.rpc.lost,
      committed: run.committed.length,
      rescaled: run.rescaled ? 1 : 0,
      inflightCheckpoints:
        run.settled && 'result' in run.settled
          ? run.settled.result.checkpoints.filter((c) => c.status === 'COMPLETED' && c.subtasks.some((st) => st.metrics.channelStateBytes > 0)).length
          : 0,
    },
  };
}
