/**
 * `weir sim`: runs seeds of the deterministic simulator over the built-in scenarios or a job module
 * of your own. Prints the seed first; on a failure, the checker and the command that replays it.
 * Exit codes: 0 all passed, 1 checker violation, 3 liveness, 4 crash, 2 usage.
 */
import type { OutputRule } from '../sim/checkers/exactly-once.ts';
import { SIM_MODES, type SimJob, type SimMode } from '../sim/run-seed.ts';
import { describeRecovery, describeTaskManagerShares, exitCodeFor, runSeeds } from '../sim/runner.ts';
import { JOB_ONLY_SCENARIOS, SCENARIOS, type ScenarioName } from '../sim/scenarios/scenarios.ts';
import { UsageError } from './exit.ts';
import { loadJobModule, type LoadedJobModule } from '../api/load-job-module.ts';
import { systemClock } from '../core/adapters.ts';
import { SimProgress } from './sim-progress.ts';

export interface SimFlags {
  seeds?: number;
  seed?: number;
  start?: number;
  mode?: string;
  job?: string;
  verbose?: boolean;
  trace?: boolean;
}

async function resolveJob(job: string | undefined): Promise<SimJob | undefined> {
  if (job === undefined) return undefined;
  const builtIn: readonly string[] = [...SCENARIOS, ...JOB_ONLY_SCENARIOS];
  if (builtIn.includes(job)) return job as ScenarioName;
  if (!/[/\\]|\.[cm]?[jt]s$/.test(job)) throw new UsageError(`--job: '${job}' is neither a built-in scenario (${builtIn.join(', ')}) nor a job module path`);
  const module = await loadJobModule(job);
  return { name: module.name, path: module.path, options: module.options, build: module.build, outputRule: outputRuleOf(module) };
}

/** How a module's output is checked: its own simCheck, a multiset when order-independent, else counts per sink. */
export function outputRuleOf(module: Pick<LoadedJobModule, 'simCheck' | 'simOutput'>): OutputRule {
  if (module.simCheck !== undefined) return { kind: 'custom', check: module.simCheck };
  return module.simOutput === 'order-independent' ? { kind: 'multiset' } : { kind: 'counts' };
}

function describeRule(rule: OutputRule | undefined): string | null {
  switch (rule?.kind) {
    case undefined:
      return null;
    case 'custom':
      return "output checked by the module's simCheck against the fault-free run";
    case 'multiset':
      return "output compared with the fault-free run line by line, in any order (simOutput: 'order-independent')";
    case 'counts':
      return "the module exports neither simCheck nor simOutput: only record counts per sink are compared with the fault-free run (see README, 'weir sim')";
  }
}

export async function simCommand(flags: SimFlags): Promise<number> {
  if (flags.seed !== undefined && flags.seeds !== undefined) throw new UsageError('--seed and --seeds: give one or the other');
  let mode: SimMode | undefined;
  if (flags.mode !== undefined) {
    if (!(SIM_MODES as readonly string[]).includes(flags.mode)) throw new UsageError(`--mode: must be one of ${SIM_MODES.join(', ')}, got '${flags.mode}'`);
    mode = flags.mode as SimMode;
  }
  const job = await resolveJob(flags.job);
  const start = flags.seed ?? flags.start ?? 1;
  const seeds = flags.seed !== undefined ? 1 : (flags.seeds ?? 100);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  print(
    `weir sim: seeds ${start}..${start + seeds - 1}${mode ? `, mode ${mode}` : `, modes ${SIM_MODES.join('/')}`}${flags.job ? `, job ${flags.job}` : ', all scenarios'}`,
  );
  const rule = describeRule(typeof job === 'object' ? job.outputRule : undefined);
  if (rule !== null) print(`  ${rule}`);
  const t0 = systemClock.now();
  const progress = new SimProgress({ total: seeds, now: () => systemClock.now(), write: (line) => process.stderr.write(`${line}\n`) });
  const summary = await runSeeds({
    seeds,
    start,
    mode,
    job,
    print,
    verbose: flags.verbose,
    trace: flags.trace,
    onSeedDone: (o) => progress.seedDone(o.kind === 'ok'),
  });
  const secs = ((systemClock.now() - t0) / 1000).toFixed(1);
  const k = summary.byKind;
  print(
    `${summary.runs} seeds in ${secs} s: ${k.ok} passed, ${k.violation} checker violations, ${k.liveness} liveness failures, ${k.crash} crashes (${summary.restarts} restarts, ${summary.checkpoints} checkpoints of which ${summary.inflightCheckpoints} persisted in-flight data, ${summary.rescaled} savepoint rescales, ${summary.faults} injected faults)`,
  );
  print(`recovery: ${describeRecovery(summary.recovery)}`);
  if (seeds > 1) for (const line of describeTaskManagerShares(summary.byTaskManagers)) print(`  ${line}`);
  return exitCodeFor(summary);
}
