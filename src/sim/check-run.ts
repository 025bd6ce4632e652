/**
 * Checking a run: turns what the run recorded into the seed's outcome: crashes and liveness,
 * committed output against the fault-free oracle (checker a), and every checker's findings.
 */
import { errorMessage } from '../core/errors.ts';
import { checkCommitOrder } from './checkers/commit-order.ts';
import { checkOutput, type OutputRule } from './checkers/exactly-once.ts';
import { guarantee, type SeedKnobs, type SimMode } from './knobs.ts';
import type { RecoveryCounts, RunRecord } from './sim-run.ts';

export type OutcomeKind = 'ok' | 'violation' | 'liveness' | 'crash';

export interface SeedStats {
  readonly steps: number;
  readonly virtualMs: number;
  readonly restarts: number;
  readonly checkpointsCompleted: number;
  readonly taskFaults: number;
  readonly storageFaults: number;
  readonly messagesLost: number;
  readonly committed: number;
  readonly recovery: RecoveryCounts;
}

export interface SeedOutcome {
  readonly seed: number;
  readonly scenario: string;
  readonly mode: SimMode;
  readonly kind: OutcomeKind;
  /** Checker name -> what it found; empty when the seed passed. */
  readonly failures: ReadonlyArray<{ checker: string; messages: string[] }>;
  readonly traceHash: string;
  /** The seed's drawn knobs (printed with every failure). */
  readonly knobs: SeedKnobs | null;
  readonly stats: SeedStats;
}

/** `rule`: how a user module's output is compared (built-in scenarios: as a multiset). */
export function checkRun(k: SeedKnobs, run: RunRecord, oracle: readonly string[], rule?: OutputRule): SeedOutcome {
  const failures: Array<{ checker: string; messages: string[] }> = [];
  let kind: OutcomeKind = 'ok';
  if (run.unexpected.length > 0) {
    failures.push({ checker: 'crash', messages: run.unexpected.slice(0, 5) });
    kind = 'crash';
  }
  if (run.settled === null) {
    failures.push({
      checker: 'liveness',
      messages: [`the job did not finish after faults stopped (${run.world.steps} steps, ${Math.round(run.world.now())} virtual ms)`],
    });
    if (kind === 'ok') kind = 'liveness';
  } else if ('error' in run.settled) {
    failures.push({ checker: 'crash', messages: [`the job failed: ${errorMessage(run.settled.error)}`] });
    kind = 'crash';
  } else {
    const output = checkOutput(guarantee(k.mode), run.committed, oracle, rule);
    if (output.length > 0) run.problems.set('exactly-once-output', output);
    // Built-in scenarios pass their rule (multiset) too: checking for `undefined` here skipped this checker for them.
    if (rule?.kind !== 'custom' && guarantee(k.mode) === 'exactly-once' && (k.job === 'keyed-counts' || k.job === 'union')) {
      const order = checkCommitOrder(run.committed);
      if (order.length > 0) run.problems.set('commit-order', order);
    }
  }
  for (const [checker, messages] of run.problems) {
    failures.push({ checker, messages });
    if (kind === 'ok') kind = 'violation';
  }
  run.world.mix(run.committed.length);
  return {
    seed: k.seed,
    scenario: k.job,
    mode: k.mode,
    kind,
    failures,
    traceHash: run.world.traceHash,
    knobs: k,
    stats: {
      steps: run.world.steps,
      virtualMs: Math.round(run.world.now()),
      restarts: run.restarts,
      checkpointsCompleted: run.checkpointsCompleted,
      taskFaults: run.taskFaults,
      storageFaults: run.storageFaults,
      messagesLost: run.messagesLost,
      committed: run.committed.length,
      recovery: run.recovery,
    },
  };
}
