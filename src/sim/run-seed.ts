/**
 * Runs one seed: draws its knobs, runs the job without faults once (the oracle), runs it with the
 * seed's faults, and checks the run. The three parts live in knobs.ts, sim-run.ts and check-run.ts.
 */
import { errorMessage } from '../core/errors.ts';
import { checkRun, type SeedOutcome } from './check-run.ts';
import { drawKnobs, type SeedKnobs, type SimMode } from './knobs.ts';
import { jobName, type SimJob } from './scenarios/sim-job.ts';
import { scenarioOutputRule } from './scenarios/scenarios.ts';
import { SimRun } from './sim-run.ts';

export { guarantee, SIM_MODES, type SimBackend, type SimMode } from './knobs.ts';
export { jobName, type SimJob, type SimJobModule } from './scenarios/sim-job.ts';
export type { OutcomeKind, SeedOutcome } from './check-run.ts';

/** The knobs a seed runs with. */
export function knobsFor(seed: number, job: SimJob, mode: SimMode): SeedKnobs {
  return drawKnobs(seed, { job: jobName(job), mode, builtIn: typeof job === 'string', userOptions: typeof job === 'string' ? undefined : job.options });
}

/** The fault-free run's committed output, and what the barrier-order checker found in it (its rpc delays reorder triggers too). */
interface Oracle {
  readonly committed: string[];
  readonly barrierOrder: readonly string[];
}

const oracles = new Map<string, Oracle>();

async function oracleFor(k: SeedKnobs, job: SimJob): Promise<Oracle> {
  const key = `${k.seed}/${k.job}/${k.mode}`;
  const known = oracles.get(key);
  if (known) return known;
  const clean = await new SimRun(k, job, false).run();
  if (!clean.settled || !('result' in clean.settled)) {
    throw new Error(`seed ${k.seed}: the fault-free oracle run did not finish: ${clean.settled ? errorMessage(clean.settled.error) : 'no progress'}`);
  }
  const oracle = { committed: clean.committed, barrierOrder: clean.problems.get('barrier-order') ?? [] };
  oracles.set(key, oracle);
  return oracle;
}

export async function runSeed(seed: number, job: SimJob, mode: SimMode, trace?: (line: string) => void): Promise<SeedOutcome> {
  const k = knobsFor(seed, job, mode);
  const oracle = await oracleFor(k, job);
  const run = await new SimRun(k, job, true, trace).run();
  if (oracle.barrierOrder.length > 0) run.problems.set('barrier-order (fault-free run)', [...oracle.barrierOrder]);
  return checkRun(k, run, oracle.committed, typeof job === 'string' ? scenarioOutputRule(job, k.source) : job.outputRule);
}
