/**
 * What a simulated process builds from the knobs: the stream environment with the seed's options,
 * and the job on it (a built-in scenario, or a user's module with its sinks replaced by ones over
 * the seed's external store).
 */
import { StreamEnvironment } from '../../api/environment.ts';
import type { Scheduler } from '../../core/time.ts';
import type { StreamEnvironmentOptions } from '../../api/options.ts';
import type { OutputRule } from '../checkers/exactly-once.ts';
import { guarantee, type SeedKnobs, type SimBackend, type SimMode } from '../knobs.ts';
import { DEATH_HEARTBEAT } from '../world/task-manager-faults.ts';
import {
  buildScenario,
  type BuiltScenario,
  type JobVariant,
  type ProcessShared,
  type ScenarioName,
  type ScenarioSinks,
  type SequenceLog,
} from './scenarios.ts';

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

export type { SimMode };

function stateBackendOptions(b: SimBackend): Pick<StreamEnvironmentOptions, 'stateBackend' | 'incremental' | 'embeddedState'> {
  if (b.changelog !== undefined) {
    const over =
      b.kind === 'heap'
        ? ({ type: 'heap' } as const)
        : ({
            type: 'embedded',
            incremental: b.kind === 'embedded-incremental',
            cacheEntriesMax: b.cacheEntriesMax,
            incrementsShareMax: b.incrementsShareMax,
          } as const);
    const { uploadBytesThreshold, materializationIntervalMs } = b.changelog;
    return { stateBackend: { type: 'changelog', over, uploadBytesThreshold, materializationIntervalMs } };
  }
  if (b.kind === 'heap') return { stateBackend: 'heap' };
  return {
    stateBackend: 'embedded',
    incremental: b.kind === 'embedded-incremental',
    embeddedState: { cacheEntriesMax: b.cacheEntriesMax, incrementsShareMax: b.incrementsShareMax },
  };
}

export function environmentFor(k: SeedKnobs, job: SimJob, parallelism: number): StreamEnvironment {
  const user = typeof job === 'string' ? null : job;
  const c = k.checkpointing;
  return StreamEnvironment.create({
    ...(user?.options.stateBackend === undefined ? stateBackendOptions(k.backend) : {}),
    ...(user ? { ...user.options, checkpointStorage: undefined, jobId: undefined } : {}),
    parallelism,
    maxParallelism: k.maxParallelism,
    checkpointing: {
      intervalMs: c.intervalMs,
      mode: guarantee(k.mode),
      timeoutMs: c.timeoutMs,
      maxConcurrent: c.maxConcurrent,
      tolerableFailures: 1_000_000,
      retained: c.retained,
      ...(k.mode === 'unaligned' ? { unaligned: true } : {}),
      ...(k.mode === 'aligned-timeout' ? { unaligned: true, alignedCheckpointTimeoutMs: c.alignedTimeoutMs } : {}),
    },
    restartStrategy: { type: 'fixed-delay', attempts: 1_000_000, delayMs: k.restartDelayMs },
    bufferRecords: k.bufferRecords,
    channelCapacity: k.channelCapacity,
    // Channels between task managers 1-4 times as deep as the others, from the seed without a draw
    // (seeds = 1 mod 4 keep their traces): small windows keep backpressure and overtaking to explore,
    // deeper ones give credit back in batches (a quarter of the window).
    remoteChannelCapacity: k.channelCapacity * (1 + (k.seed % 4)),
    // Periodic watermarks (jobs with a watermark strategy only) every 1-7 virtual ms, from the seed without a draw.
    autoWatermarkIntervalMs: user?.options.autoWatermarkIntervalMs ?? 1 + (k.seed % 7),
    // A task manager stuck in user code on cancel is ended after this many virtual ms (the watchdog).
    cancellationTimeoutMs: user?.options.cancellationTimeoutMs ?? 50,
    // Seeds whose task managers die silently or are cut off find them within a few checkpoint intervals.
    ...(k.faults.taskManagers.deathsAtMs.length > 0 || k.faults.taskManagers.links.length > 0 ? { heartbeat: DEATH_HEARTBEAT } : {}),
    jobId: 'sim',
  });
}

/** What a build of the seed's job needs besides the job and the environment. */
export interface SimBuild {
  readonly k: SeedKnobs;
  readonly log: SequenceLog;
  readonly sinks: ScenarioSinks;
  readonly variant: JobVariant;
  readonly scheduler?: Scheduler;
  /** What the builds of one process share (the job master's and its task managers'). */
  readonly shared?: ProcessShared;
}

/** Builds the seed's job on `env`; sinks write to the seed's external side. */
export async function buildJob(job: SimJob, env: StreamEnvironment, b: SimBuild): Promise<BuiltScenario> {
  if (typeof job !== 'string') {
    await job.build(env);
    env.replaceSinks((uid) => b.sinks.forUid(uid));
    return { sources: [], keyed: null, committed: () => b.sinks.committed(true) };
  }
  return buildScenarioJob(job, env, b);
}

/** Builds a built-in scenario on `env`, at once (an in-memory task manager's build takes no turn of the event loop). */
export function buildScenarioJob(job: ScenarioName, env: StreamEnvironment, { k, log, sinks, variant, scheduler, shared }: SimBuild): BuiltScenario {
  sinks.commitLatency = k.commitLatencyMs > 0 && scheduler ? { ms: k.commitLatencyMs, scheduler } : null;
  const spec = {
    parallelism: k.parallelism,
    count: k.source.count,
    keysPerSplit: k.source.keysPerSplit,
    ratePerSec: k.source.ratePerSec,
    idleAfterMs: Math.max(1, k.source.durationMs * 0.7),
  };
  return buildScenario(job, env, {
    spec,
    log,
    mode: guarantee(k.mode) === 'exactly-once' ? 'exact' : 'no-skip',
    sinks,
    variant,
    scheduler,
    checkpointMode: k.mode,
    shared,
  });
}
