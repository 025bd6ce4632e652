/**
 * The knobs of one seed, drawn purely from the seed (as TigerBeetle's VOPR does): mode, scenario,
 * backend, parallelism, checkpointing options, and when and where faults strike. A plain object,
 * printed with the seed on every failure; the run only reads it.
 */
import { SeededRandom } from '../core/time.ts';
import type { StreamEnvironmentOptions } from '../api/options.ts';
import type { FaultProbabilities } from './world/random-faults.ts';
import type { ObjectStoreKnobs, StorageFaultOptions } from './world/faulty-storage.ts';
import type { SimRpcOptions } from './world/sim-rpc.ts';
import { drawTaskManagerFaults, NO_TASK_MANAGER_FAULTS, type TaskManagerFaultKnobs } from './world/task-manager-faults.ts';

/** Checkpointing modes the simulator runs: aligned exactly-once, at-least-once, unaligned, aligned with a timeout. */
export type SimMode = 'exactly-once' | 'at-least-once' | 'unaligned' | 'aligned-timeout';
export const SIM_MODES: readonly SimMode[] = ['exactly-once', 'at-least-once', 'unaligned', 'aligned-timeout'];

/** The guarantee a mode gives: every mode but at-least-once is exactly-once. */
export function guarantee(mode: SimMode): 'exactly-once' | 'at-least-once' {
  return mode === 'at-least-once' ? 'at-least-once' : 'exactly-once';
}

/** The changelog wrapper around a seed's backend: small thresholds so batches, retries and materializations happen within a seed. */
export interface SimChangelog {
  readonly uploadBytesThreshold: number;
  readonly materializationIntervalMs: number;
  /** Kill the process as the nth materialization (of any subtask, within the fault window) starts; null: no such kill. */
  readonly killAtMaterialization: number | null;
}

/** The state backends a seed may run: heap, embedded with full checkpoints, embedded incremental; any of them under the changelog. */
export type SimBackend = (
  | { readonly kind: 'heap' }
  | { readonly kind: 'embedded-full' | 'embedded-incremental'; readonly cacheEntriesMax: number; readonly incrementsShareMax: number }
) & { readonly changelog?: SimChangelog };

/**
 * Where a process kill strikes: a virtual time after faults start; as the nth checkpoint completes
 * (pre-committed, not yet committed); during the nth state upload; around the nth `_metadata` write.
 */
export type KillPoint =
  | { readonly at: 'time'; readonly afterMs: number }
  | { readonly at: 'checkpoint-complete'; readonly nth: number }
  | { readonly at: 'upload'; readonly nth: number }
  | { readonly at: 'metadata'; readonly nth: number; readonly durable: boolean };

export interface KillPlan {
  readonly point: KillPoint;
  /** Kill each resumed process again this many times, `againAfterMs` after it runs (before a new checkpoint completes). */
  readonly again: number;
  readonly againAfterMs: number;
  /** Virtual ms between the death and the new process. */
  readonly downMs: number;
}

/** A file of a completed checkpoint rots at rest, then a failure makes the job restore. */
export interface CorruptionPlan {
  readonly afterMs: number;
  readonly target: 'metadata' | 'state-file';
  readonly how: 'truncate' | 'flip';
  readonly followedBy: 'restart' | 'kill';
}

export interface SeedKnobs {
  readonly seed: number;
  readonly job: string;
  readonly mode: SimMode;
  readonly backend: SimBackend;
  readonly parallelism: number;
  readonly maxParallelism: number;
  /**
   * 1: every subtask in the job master's thread; 2-3: that many task managers in this thread over
   * the in-memory transport, so records, barriers, acks, notifications, cancel and heartbeats go
   * through the task manager protocol and serialized credit-based channels.
   */
  readonly taskManagers: number;
  readonly source: { readonly count: number; readonly keysPerSplit: number; readonly ratePerSec: number; readonly durationMs: number };
  readonly checkpointing: {
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly maxConcurrent: number;
    readonly retained: number;
    readonly alignedTimeoutMs: number;
  };
  readonly restartDelayMs: number;
  readonly bufferRecords: number;
  readonly channelCapacity: number;
  readonly elementsPerStep: number;
  readonly sourceBatchRecords: number;
  /** Virtual ms a step may cost; the slow worlds build up backpressure, so barriers overtake data. */
  readonly stepCostMsMax: number;
  readonly faults: {
    readonly task: FaultProbabilities;
    readonly maxTaskFaults: number;
    readonly storage: StorageFaultOptions;
    readonly rpc: SimRpcOptions;
    readonly slowProbability: number;
    /** Stalled data links and task managers stuck on cancel (seeds with in-memory task managers). */
    readonly taskManagers: TaskManagerFaultKnobs;
    /** Faults run from the moment the job runs until this many checkpoints completed (or maxWindowMs passed). */
    readonly untilCheckpoints: number;
    readonly maxWindowMs: number;
  };
  /** Job-wide restarts, ms after faults start. */
  readonly restartsAtMs: readonly number[];
  readonly kills: readonly KillPlan[];
  readonly corruption: CorruptionPlan | null;
  /**
   * Virtual ms the external transactional store takes per commit (0: at once). Slow commits leave
   * several pre-commits pending in a checkpoint, so a recovery commits them again in an order that shows.
   */
  readonly commitLatencyMs: number;
  /**
   * Async snapshot parts start up to this many virtual ms after their sync part (0: at once), so
   * records change, overwrite and delete keys a running snapshot pinned. state-kinds only.
   */
  readonly asyncStartDelayMsMax: number;
  /** Right after each of the first checkpoints holding in-flight data completes, the job restarts or the process is killed, so it restores that data. */
  readonly afterInflight: 'restart' | 'kill' | null;
  /** Stop with a savepoint this long after the job runs and resume from it at `to` (and, with changeJob, as a changed job). */
  readonly rescale: { readonly atMs: number; readonly to: number; readonly changeJob: boolean } | null;
  /**
   * Job master high availability: each process is a job master that must hold the job's lease in an
   * HA store (in memory, on the virtual clock) before it runs; it publishes every completed
   * checkpoint there before notifying, and a process started after a kill waits out the dead one's
   * lease and restores the checkpoint the store's pointer names (not the newest on disk). Null: none.
   */
  readonly ha: {
    readonly leaseMs: number;
    /**
     * The leader is paused (SIGSTOP) this long after the fault window opens (at a moment no
     * checkpoint of it is pending), for `forMs` (over two leases): a standby takes over, then the
     * stale leader wakes while it runs. Null: no pause.
     */
    readonly pause: { readonly afterMs: number; readonly forMs: number } | null;
  } | null;
}

/** What a seed runs besides the seed: the job's name and the options a user's module fixes. */
export interface KnobInputs {
  readonly job: string;
  readonly mode: SimMode;
  readonly builtIn: boolean;
  readonly userOptions?: Pick<StreamEnvironmentOptions, 'parallelism' | 'maxParallelism'>;
}

/**
 * state-kinds runs the embedded incremental backend, two concurrent checkpoints in aligned modes;
 * with unaligned checkpoints (and aligned ones timing out) half its seeds run the heap backend, so
 * copy-on-write of maps pinned by a late async part is exercised too. Its own stream.
 */
function stateKindsBackend(seed: number, mode: SimMode): 'heap' | 'embedded-incremental' {
  if (mode === 'exactly-once' || mode === 'at-least-once') return 'embedded-incremental';
  return new SeededRandom(seed ^ 0x4ea9c0f1).next() < 0.5 ? 'heap' : 'embedded-incremental';
}

/**
 * Half the keyed-counts and union seeds commit slowly (the scenarios whose commit order is checked),
 * drawn from its own stream so every other knob stays as it was; the other seeds keep their traces.
 */
function drawCommitLatency(seed: number, job: string): number {
  if (job !== 'keyed-counts' && job !== 'union') return 0;
  const r = new SeededRandom(seed ^ 0x3c0aa17e);
  return r.next() < 0.5 ? 0 : 5 + r.int(60);
}

/**
 * Two in five seeds checkpoint to an object store (no rename, create-only `_metadata`, lost uploads,
 * late PUTs) instead of a file system. From a stream of its own: the other draws of a seed stay as
 * they were (the seeds that draw it take other paths through the same fault draws).
 */
function drawObjectStore(seed: number): ObjectStoreKnobs | null {
  const r = new SeededRandom(seed ^ 0x0b1ec75e);
  return r.next() < 0.4 ? { latePutDelayMsMax: 1 + r.int(40) } : null;
}

/** A tiny cache forces eviction to the store; a small share forces frequent new bases. */
function drawBackend(seed: number, job: string, mode: SimMode): SimBackend {
  const r = new SeededRandom(seed ^ 0x0bac4e7d);
  const drawn = (['heap', 'embedded-full', 'embedded-incremental'] as const)[r.int(3)]!;
  const kind = job === 'state-kinds' ? stateKindsBackend(seed, mode) : drawn;
  const changelog = drawChangelog(seed);
  const wrap = changelog === null ? {} : { changelog };
  if (kind === 'heap') return { kind, ...wrap };
  return { kind, cacheEntriesMax: 2 + r.int(40), incrementsShareMax: [0.25, 1, 4][r.int(3)]!, ...wrap };
}

/** A third of the seeds wrap their backend in the changelog. Its own stream: the other knobs of a seed stay as they were. */
function drawChangelog(seed: number): SimChangelog | null {
  const r = new SeededRandom(seed ^ 0x6c0c4a11);
  if (r.next() >= 1 / 3) return null;
  const uploadBytesThreshold = [256, 4096, 1 << 20][r.int(3)]!;
  const materializationIntervalMs = 5 + r.int(200);
  // Drawn last: the draws above stay as they were for every seed.
  const killAtMaterialization = r.next() < 0.5 ? 1 + r.int(3) : null;
  return { uploadBytesThreshold, materializationIntervalMs, killAtMaterialization };
}

/**
 * A quarter of the seeds run in-thread, three eighths on 2 and three eighths on 3 in-memory task
 * managers. Drawn from its own stream, so adding the knob left every other knob of a seed as it was.
 */
function drawTaskManagers(seed: number): number {
  const roll = new SeededRandom(seed ^ 0x7a5c3e11).next();
  return roll < 0.25 ? 1 : roll < 0.625 ? 2 : 3;
}

function drawKill(r: SeededRandom, durationMs: number, intervalMs: number): KillPlan {
  const nth = 1 + r.int(4);
  const kind = r.int(4);
  const point: KillPoint =
    kind === 0
      ? { at: 'time', afterMs: r.next() * durationMs }
      : kind === 1
        ? { at: 'checkpoint-complete', nth }
        : kind === 2
          ? { at: 'upload', nth: nth * 2 }
          : { at: 'metadata', nth, durable: r.next() < 0.5 };
  const roll = r.next();
  return { point, again: roll < 0.55 ? 0 : roll < 0.85 ? 1 : 2, againAfterMs: 1 + r.next() * intervalMs * 0.8, downMs: r.int(20) };
}

/** Draws every knob of a seed; the same inputs give the same object. */
export function drawKnobs(seed: number, inputs: KnobInputs): SeedKnobs {
  const r = new SeededRandom(seed ^ 0x5eed5eed);
  const drawnParallelism = 1 + r.int(3);
  const parallelism = inputs.userOptions?.parallelism ?? drawnParallelism;
  const count = 200 + r.int(1000);
  const keysPerSplit = 1 + r.int(6);
  const durationMs = 100 + r.int(300);
  // Half the seeds run in a slow world with sources that never wait: channels stay full.
  const backpressured = r.next() < (inputs.mode === 'aligned-timeout' ? 0.8 : 0.5);
  // At least the job's own parallelism (a module may fix it above the drawn one).
  const maxParallelism = inputs.userOptions?.maxParallelism ?? Math.max([drawnParallelism, 8, 128][r.int(3)]!, parallelism);
  const intervalMs = 5 + r.int(40);
  const aligned = inputs.mode === 'exactly-once' || inputs.mode === 'at-least-once';
  // state-kinds runs two concurrent checkpoints with aborts (short timeouts) on the embedded incremental backend.
  const concurrentIncremental = inputs.job === 'state-kinds' && aligned;
  const checkpointing = {
    intervalMs,
    timeoutMs: concurrentIncremental ? 15 + r.int(60) : 60 + r.int(300),
    maxConcurrent: concurrentIncremental ? 2 : aligned ? 1 + r.int(2) : 1,
    retained: 1 + r.int(3),
    alignedTimeoutMs: r.next() < 0.5 ? r.int(3) : 1 + r.int(20),
  };
  const knobs = {
    restartDelayMs: r.int(20),
    bufferRecords: 1 + r.int(16),
    channelCapacity: 1 + r.int(4),
    elementsPerStep: 1 + (seed % 4),
    sourceBatchRecords: 1 + (seed % 8),
    stepCostMsMax: backpressured ? 0.5 : 0.05,
  };
  // A fifth of the seeds only kill the process, repeatedly (as the SIGKILL soak of `weir run` does): no
  // other fault moves the attempt numbers apart, so every process starts at attempt 0.
  const killsOnly = r.next() < 0.2;
  const faults = {
    task: killsOnly
      ? { process: 0, 'sync-phase': 0, 'async-phase': 0, 'before-ack': 0, commit: 0 }
      : { process: 0.01, 'sync-phase': 0.05, 'async-phase': 0.05, 'before-ack': 0.05, commit: 0.05 },
    maxTaskFaults: 8,
    storage: { writeFailProbability: 0.04, tornWriteProbability: 0.04, renameFailProbability: 0.05, latencyMsMax: 2, objectStore: drawObjectStore(seed) },
    rpc: { delayProbability: 0.1, delayMsMax: 20, lossProbability: 0.04 },
    slowProbability: 0.05,
    taskManagers: killsOnly ? NO_TASK_MANAGER_FAULTS : drawTaskManagerFaults(seed, durationMs, drawTaskManagers(seed)),
    untilCheckpoints: 2 + r.int(5),
    maxWindowMs: 300 + durationMs * 2,
  };
  const restartsAtMs = Array.from({ length: r.int(3) }, () => r.next() * durationMs).filter(() => !killsOnly);
  const drawn = r.next() < 0.5 || killsOnly ? Array.from({ length: 1 + r.int(2) }, () => drawKill(r, durationMs, intervalMs)) : [];
  const kills = killsOnly
    ? drawn.map((k, i) => (i === 0 ? { ...k, point: { at: 'checkpoint-complete' as const, nth: 1 + (k.again % 2) }, again: Math.max(1, k.again) } : k))
    : drawn;
  // Only with two or more retained checkpoints is there one to fall back to.
  const corruption: CorruptionPlan | null =
    r.next() < 0.4 && checkpointing.retained >= 2
      ? {
          afterMs: r.next() * durationMs,
          target: r.next() < 0.5 ? 'metadata' : 'state-file',
          how: r.next() < 0.5 ? 'truncate' : 'flip',
          followedBy: r.next() < 0.5 ? 'restart' : 'kill',
        }
      : null;
  const afterInflightRoll = r.next();
  const afterInflight = aligned ? null : afterInflightRoll < 0.3 ? 'restart' : afterInflightRoll < 0.6 ? 'kill' : null;
  const rescaleTo = 1 + r.int(Math.min(4, maxParallelism));
  const rescaleAtMs = r.next() * durationMs;
  const changeJob = inputs.builtIn && r.next() < 0.5;
  const rescale = r.next() < 0.5 && (rescaleTo !== parallelism || changeJob) ? { atMs: rescaleAtMs, to: rescaleTo, changeJob } : null;
  return {
    seed,
    job: inputs.job,
    mode: inputs.mode,
    backend: drawBackend(seed, inputs.job, inputs.mode),
    parallelism,
    maxParallelism,
    taskManagers: drawTaskManagers(seed),
    commitLatencyMs: drawCommitLatency(seed, inputs.job),
    asyncStartDelayMsMax: inputs.job === 'state-kinds' ? 1 + new SeededRandom(seed ^ 0x61a5d3b9).int(12) : 0,
    source: { count, keysPerSplit, ratePerSec: Math.ceil((count * 1000) / (backpressured ? 1 : durationMs)), durationMs },
    checkpointing,
    ...knobs,
    faults,
    restartsAtMs,
    kills,
    corruption,
    afterInflight,
    rescale,
    ha: drawHa(seed, kills.length > 0 && corruption === null && rescale === null),
  };
}

/**
 * Two in five of the seeds that kill the process (without corruption at rest or a savepoint
 * rescale, which the pointer model does not cover yet) run as HA job masters. From a stream of its
 * own: the other draws of a seed stay as they were.
 */
function drawHa(seed: number, eligible: boolean): SeedKnobs['ha'] {
  const r = new SeededRandom(seed ^ 0x4a11ea5e);
  if (!eligible || r.next() >= 0.4) return null;
  // Long against a step's virtual cost and the slow faults (a renewal that fires late is a job master's
  // event loop stalled): a leader that loses its lease anyway is deposed and replaced (counted).
  const leaseMs = 150 + r.int(250);
  return { leaseMs, pause: drawPause(seed, leaseMs) };
}

/** Three in four HA seeds pause their leader once and let it wake while its successor runs. From a stream of its own. */
function drawPause(seed: number, leaseMs: number): { afterMs: number; forMs: number } | null {
  const r = new SeededRandom(seed ^ 0x5a05e57d);
  if (r.next() >= 0.75) return null;
  return { afterMs: 5 + r.int(100), forMs: Math.round(leaseMs * (2 + r.next())) };
}

function describeKill(k: KillPlan): string {
  const p = k.point;
  const where =
    p.at === 'time'
      ? `at +${p.afterMs.toFixed(1)}ms`
      : p.at === 'metadata'
        ? `at _metadata #${p.nth} (${p.durable ? 'after' : 'before'} it is durable)`
        : `at ${p.at} #${p.nth}`;
  return `${where}${k.again > 0 ? `, again x${k.again} +${k.againAfterMs.toFixed(1)}ms after each resume` : ''}, down ${k.downMs}ms`;
}

function describeTaskManagerFaults(k: SeedKnobs): string {
  const t = k.faults.taskManagers;
  if (k.taskManagers === 1) return 'none (in-thread)';
  const stalls =
    t.stallProbability > 0
      ? `data links stall up to ${t.stallMsMax}ms (${t.stallProbability} per message, ${t.cancelStallProbability} per cancel)`
      : 'no stalls';
  const deaths = t.deathsAtMs.length > 0 ? `one dies silently at ${t.deathsAtMs.map((ms) => `+${ms.toFixed(1)}ms`).join(', ')}` : 'none dies silently';
  const links =
    t.links.length > 0
      ? `connections and processes: ${t.links.map((f) => `${f.kind}${f.kind === 'partition' ? ` healing after ${f.healAfterMs.toFixed(1)}ms` : ''} at +${f.atMs.toFixed(1)}ms`).join(', ')}`
      : 'no connection drops, partitions or process exits';
  return `${stalls}; ${t.stuckOnCancelProbability > 0 ? `stuck on cancel with ${t.stuckOnCancelProbability}` : 'never stuck on cancel'}; ${deaths}; ${links}`;
}

/** The knobs in a few lines, for failure reports. */
export function describeKnobs(k: SeedKnobs): string[] {
  const inner = k.backend.kind === 'heap' ? 'heap' : `${k.backend.kind} (cache ${k.backend.cacheEntriesMax}, share ${k.backend.incrementsShareMax})`;
  const cl = k.backend.changelog;
  const b =
    cl === undefined
      ? inner
      : `changelog (batches ${cl.uploadBytesThreshold} B, materialization every ${cl.materializationIntervalMs}ms${cl.killAtMaterialization === null ? '' : `, a kill as materialization ${cl.killAtMaterialization} starts`}) over ${inner}`;
  const c = k.checkpointing;
  return [
    `knobs: job ${k.job}, mode ${k.mode}, backend ${b}, parallelism ${k.parallelism}/${k.maxParallelism}, ${k.taskManagers === 1 ? 'in-thread' : `${k.taskManagers} in-memory task managers`}, ${k.source.count} records x ${k.source.keysPerSplit} keys/split over ${k.source.durationMs}ms`,
    `  checkpoints every ${c.intervalMs}ms, timeout ${c.timeoutMs}ms, concurrent ${c.maxConcurrent}, retained ${c.retained}${k.mode === 'aligned-timeout' ? `, aligned timeout ${c.alignedTimeoutMs}ms` : ''}; restart delay ${k.restartDelayMs}ms, buffers ${k.bufferRecords} records x ${k.channelCapacity}`,
    `  faults until ${k.faults.untilCheckpoints} checkpoints completed (at most ${k.faults.maxWindowMs}ms); restarts at ${k.restartsAtMs.map((t) => `+${t.toFixed(1)}ms`).join(', ') || 'none'}`,
    `  task managers: ${describeTaskManagerFaults(k)}`,
    `  checkpoint storage: ${k.faults.storage.objectStore ? `object store (no rename, create-only _metadata, lost uploads, PUTs landing up to ${k.faults.storage.objectStore.latePutDelayMsMax}ms after their timeout)` : 'file system (rename, torn writes)'}`,
    `  kills: ${k.kills.map(describeKill).join('; ') || 'none'}`,
    `  corruption: ${k.corruption ? `${k.corruption.how} a ${k.corruption.target} at +${k.corruption.afterMs.toFixed(1)}ms, then ${k.corruption.followedBy}` : 'none'}`,
    ...(k.commitLatencyMs > 0 ? [`  external commits take ${k.commitLatencyMs}ms each`] : []),
    ...(k.asyncStartDelayMsMax > 0 ? [`  async snapshot parts start up to ${k.asyncStartDelayMsMax}ms after their sync part`] : []),
    `  after the first checkpoints with in-flight data: ${k.afterInflight ?? 'nothing'}`,
    `  savepoint: ${k.rescale ? `stop at +${k.rescale.atMs.toFixed(1)}ms, resume at parallelism ${k.rescale.to}${k.rescale.changeJob ? ' as a changed job' : ''}` : 'none'}`,
    ...(k.ha
      ? [
          `  high availability: job masters hold a ${k.ha.leaseMs}ms lease; a new one restores the published pointer${k.ha.pause === null ? '' : `; the leader paused at +${k.ha.pause.afterMs}ms for ${k.ha.pause.forMs}ms, then wakes`}`,
        ]
      : []),
  ];
}
