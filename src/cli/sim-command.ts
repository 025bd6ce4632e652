/**
 * `weir sim`: runs seeds of the deterministic simulator over the built-in scenarios or a job module
 * of your own. Prints the seed first; on a failure, the checker and the command that replays it.
 * Exit codes: 0 all passed, 1 checker violation, 3 liveness, 4 crash, 2 usage.
 */
import { SIM_MODES, type SimJob, type SimMode } from '../sim/run-seed.ts';
import { describeRecovery, exitCodeFor, runSeeds } from '../sim/runner.ts';
import { SCENARIOS, type ScenarioName } from '../sim/scenarios.ts';
import { UsageError } from './exit.ts';
import { loadJobModule } from './load-job-module.ts';
import { systemClock } from '../core/adapters.ts';

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
  if ((SCENARIOS as readonly string[]).includes(job)) return job as ScenarioName;
  if (!/[/\\]|\.[cm]?[jt]s$/.test(job)) throw new UsageError(`--job: '${job}' is neither a built-in scenario (${SCENARIOS.join(', ')}) nor a job module path`);
  const module = await loadJobModule(job);
  return { name: module.name, path: module.path, options: module.options, build: module.build };
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
  print(`weir sim: seeds ${start}..${start + seeds - 1}${mode ? `, mode ${mode}` : `, modes ${SIM_MODES.join('/')}`}${flags.job ? `, job ${flags.job}` : ', all scenarios'}`);
  const t0 = systemClock.now();
  const summary = await runSeeds({ seeds, start, mode, job, print, verbose: flags.verbose, trace: flags.trace });
  const secs = ((systemClock.now() - t0) / 1000).toFixed(1);
  const k = summary.byKind;
  print(`${summary.runs} seeds in ${secs} s: ${k.ok} passed, ${k.violation} checker violations, ${k.liveness} liveness failures, ${k.crash} crashes (${summary.restarts} restarts, ${summary.checkpoints} checkpoints of which ${summary.inflightCheckpoints} persisted in-flight data, ${summary.rescaled} savepoint rescales, ${summary.faults} injected faults)`);
  print(`recovery: ${describeRecovery(summary.recovery)}`);
  return exitCodeFor(summary);
}
