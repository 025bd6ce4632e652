/**
 * Runs many seeds and reports: the seed first, then per failing seed the checker and the one
 * command that replays it. Scenario and mode follow from the seed unless they are fixed.
 */
import { describeKnobs } from './knobs.ts';
import { jobName, knobsFor, runSeed, SIM_MODES, type OutcomeKind, type SeedOutcome, type SimJob, type SimMode } from './run-seed.ts';
import { SCENARIOS } from './scenarios/scenarios.ts';
import { noRecovery, type RecoveryCounts } from './sim-run.ts';

export interface SimRunOptions {
  /** Run seeds start .. start + seeds - 1. */
  readonly seeds: number;
  readonly start: number;
  readonly mode?: SimMode;
  readonly job?: SimJob;
  readonly print: (line: string) => void;
  /** Print a line for every seed, not only for failures. */
  readonly verbose?: boolean;
  /** Print the job events of every run (for replaying one seed). */
  readonly trace?: boolean;
  /** Called after every seed (progress display). */
  readonly onSeedDone?: (outcome: SeedOutcome) => void;
}

export interface SimSummary {
  readonly runs: number;
  readonly failures: readonly SeedOutcome[];
  readonly byKind: Readonly<Record<OutcomeKind, number>>;
  readonly restarts: number;
  readonly checkpoints: number;
  readonly faults: number;
  readonly inflightCheckpoints: number;
  /** Seeds that stopped with a savepoint and resumed from it at another parallelism. */
  readonly rescaled: number;
  /** How often the seeds reached each recovery path, summed. */
  readonly recovery: RecoveryCounts;
  /** Per value of the task-managers knob (1 = in-thread): the seeds, their outcomes and recovery counts. */
  readonly byTaskManagers: ReadonlyMap<number, TaskManagerShare>;
}

/** The seeds that ran with one value of the task-managers knob. */
export interface TaskManagerShare {
  seeds: number;
  readonly byKind: Record<OutcomeKind, number>;
  restarts: number;
  checkpoints: number;
  readonly recovery: RecoveryCounts;
}

/** Exit codes that classify a sim run: 0 all passed, 1 checker violation, 3 liveness, 4 crash. */
export const SIM_EXIT: Readonly<Record<OutcomeKind, number>> = { ok: 0, violation: 1, liveness: 3, crash: 4 };

export function scenarioFor(seed: number, job?: SimJob): SimJob {
  return job ?? SCENARIOS[seed % SCENARIOS.length]!;
}

/** Scenario and mode both cycle with the seed, so every scenario meets every mode. */
export function modeFor(seed: number, mode?: SimMode): SimMode {
  return mode ?? SIM_MODES[Math.floor(seed / SCENARIOS.length) % SIM_MODES.length]!;
}

export function replayCommand(o: Pick<SeedOutcome, 'seed' | 'mode' | 'scenario'>): string {
  return `npx weir sim --seed ${o.seed} --mode ${o.mode} --job ${o.scenario}`;
}

export async function runSeeds(o: SimRunOptions): Promise<SimSummary> {
  const byKind: Record<OutcomeKind, number> = { ok: 0, violation: 0, liveness: 0, crash: 0 };
  const failures: SeedOutcome[] = [];
  let restarts = 0;
  let checkpoints = 0;
  let faults = 0;
  const recovery = noRecovery();
  const byTaskManagers = new Map<number, TaskManagerShare>();
  for (let seed = o.start; seed < o.start + o.seeds; seed++) {
    const scenario = scenarioFor(seed, o.job);
    const mode = modeFor(seed, o.mode);
    if (o.verbose || o.seeds === 1) o.print(`seed ${seed} (${jobName(scenario)}, ${mode})`);
    if (o.seeds === 1) for (const line of describeKnobs(knobsFor(seed, scenario, mode))) o.print(`  ${line}`);
    let outcome: SeedOutcome;
    try {
      outcome = await runSeed(seed, scenario, mode, o.trace ? o.print : undefined);
    } catch (err) {
      outcome = {
        seed,
        scenario: jobName(scenario),
        mode,
        kind: 'crash',
        failures: [{ checker: 'crash', messages: [err instanceof Error ? (err.stack ?? err.message) : String(err)] }],
        traceHash: '',
        knobs: null,
        stats: {
          steps: 0,
          virtualMs: 0,
          restarts: 0,
          checkpointsCompleted: 0,
          taskFaults: 0,
          storageFaults: 0,
          messagesLost: 0,
          committed: 0,
          recovery: noRecovery(),
        },
      };
    }
    byKind[outcome.kind]++;
    const tms = knobsFor(seed, scenario, mode).taskManagers;
    let share = byTaskManagers.get(tms);
    if (!share) {
      share = { seeds: 0, byKind: { ok: 0, violation: 0, liveness: 0, crash: 0 }, restarts: 0, checkpoints: 0, recovery: noRecovery() };
      byTaskManagers.set(tms, share);
    }
    share.seeds++;
    share.byKind[outcome.kind]++;
    share.restarts += outcome.stats.restarts;
    share.checkpoints += outcome.stats.checkpointsCompleted;
    for (const key of Object.keys(recovery) as Array<keyof RecoveryCounts>) share.recovery[key] += outcome.stats.recovery[key];
    o.onSeedDone?.(outcome);
    restarts += outcome.stats.restarts;
    checkpoints += outcome.stats.checkpointsCompleted;
    faults += outcome.stats.taskFaults + outcome.stats.storageFaults + outcome.stats.messagesLost;
    for (const key of Object.keys(recovery) as Array<keyof RecoveryCounts>) recovery[key] += outcome.stats.recovery[key];
    if (o.verbose || o.seeds === 1) {
      const s = outcome.stats;
      o.print(
        `  ${outcome.kind}: ${s.steps} steps, ${s.virtualMs} virtual ms, ${describeRecovery(s.recovery)}, ${s.restarts} restarts, ${s.checkpointsCompleted} checkpoints, faults ${s.taskFaults} task / ${s.storageFaults} storage / ${s.messagesLost} lost messages, ${s.committed} records committed, trace ${outcome.traceHash}`,
      );
    }
    if (outcome.kind !== 'ok') {
      failures.push(outcome);
      if (!(o.verbose || o.seeds === 1)) o.print(`seed ${seed} (${jobName(scenario)}, ${mode})`);
      for (const f of outcome.failures) o.print(`  FAILED ${f.checker}: ${f.messages.join('\n    ')}`);
      if (outcome.knobs) for (const line of describeKnobs(outcome.knobs)) o.print(`  ${line}`);
      o.print(`  replay: ${replayCommand(outcome)}`);
    }
  }
  return {
    runs: o.seeds,
    failures,
    byKind,
    restarts,
    checkpoints,
    faults,
    inflightCheckpoints: recovery.inflightCheckpoints,
    rescaled: recovery.rescales,
    recovery,
    byTaskManagers,
  };
}

/** One line per value of the task-managers knob, in order. */
export function describeTaskManagerShares(byTaskManagers: ReadonlyMap<number, TaskManagerShare>): string[] {
  return [...byTaskManagers.entries()]
    .sort(([a], [b]) => a - b)
    .map(([tms, s]) => {
      const k = s.byKind;
      const where = tms === 1 ? 'in-thread' : `${tms} in-memory task managers`;
      return `${where}: ${s.seeds} seeds, ${k.ok} passed, ${k.violation} violations, ${k.liveness} liveness, ${k.crash} crashes; ${s.restarts} restarts, ${s.checkpoints} checkpoints, ${s.recovery.restoresFromCheckpoint} restores, ${s.recovery.kills} kills`;
    });
}

/** One line of recovery counts (a seed's or a summary's). */
export function describeRecovery(r: RecoveryCounts): string {
  return (
    `${r.restoresFromCheckpoint} restores from a checkpoint (${r.restoresWithInflight} with in-flight data), ${r.kills} process kills, ` +
    `${r.corruptions} corruptions at rest / ${r.fallbacks} fallbacks / ${r.rollbacks} sink roll-backs, ${r.timeoutSwitchesWithData} timeout switches with data, ` +
    `${r.rescales} savepoint rescales, ${r.changedJobResumes} changed-job resumes, ${r.savepointsWithOpenWindows} resumed savepoints with open windows / ${r.savepointsWithWindowTimers} with window timers, ${r.incrementalConcurrentAborts} concurrent incremental aborts, ${r.abandonedCheckpoints} checkpoints of dead processes left unclaimed, ${r.windowStartsHeld} window starts held for a barrier, ${r.splitLanesRestoredAtEnd} split lanes restored waiting at their end / ${r.splitIdleEndsHeld} idle split ends held, ${r.watchdogTerminations} watchdog terminations, ${r.staleDataMessages} stale frames/credits dropped, ${r.staleControlMessages} stale control messages dropped, ` +
    `${r.orderedRecoveryCommits} recoveries committing several pending transactions of one subtask, ${r.staleTriggers} overtaken triggers at sources, ` +
    `task managers died silently (found by heartbeats): ${r.taskManagerDeaths} (${r.deathsBeforeHello} before their hello) / exited (found by their closed connections): ${r.taskManagerExits}, ` +
    `connections dropped: ${r.controlConnectionDrops} control / ${r.dataConnectionDrops} data (${r.dataConnectionFailovers} restarts for a lost data connection), ` +
    `partitions healed: ${r.partitionsHealed} (${r.partitionsOutlived} task managers found their job master gone at the heal and stopped), ${r.earlierRunCheckpointsPassed} resumes passing over an earlier run's checkpoints, ` +
    `changelog: ${r.changelogReplayRestores} restores by replay, ${r.changelogTruncations} truncations, ${r.changelogUploadRetries} uploads retried, ${r.changelogKillsDuringMaterialization} kills during a materialization, ` +
    `HA takeovers from the published pointer: ${r.haTakeovers} (${r.haRestoresBehindDisk} with a newer _metadata durable but never published), ${r.haDepositions} leaders deposed, ${r.haStaleWakes} stale leaders woke (${r.haStaleStopped} stopped on finding their leadership gone; ${r.haStaleRepeats} repeated commits of published transactions), ` +
    `object store: ${r.objectStoreSeeds} seeds, ${r.lostUploads} uploads lost, ${r.latePuts} PUTs landing after their timeout (${r.lateOrphans} left as orphans), ${r.metadataAnswersLost} _metadata answers lost (create-only retry found its own)`
  );
}

/** The exit code for a summary: the most severe kind seen. */
export function exitCodeFor(summary: SimSummary): number {
  if (summary.byKind.crash > 0) return SIM_EXIT.crash;
  if (summary.byKind.liveness > 0) return SIM_EXIT.liveness;
  if (summary.byKind.violation > 0) return SIM_EXIT.violation;
  return 0;
}
