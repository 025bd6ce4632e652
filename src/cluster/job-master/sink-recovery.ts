/**
 * The sink-aware restore rule, as a pure decision: recovery never restores, silently, to a
 * checkpoint older than one whose transactions a sink already committed, because the sink would
 * then commit that output a second time. The job master gathers what each sink says and carries
 * out the decision (roll-backs), or fails the job with the decision's message.
 */

/** What one two-phase-commit sink says about its external system. */
export interface SinkCommitView {
  readonly uid: string;
  readonly name: string;
  /** Newest checkpoint committed (null: none); undefined: the sink cannot tell. */
  readonly newestCommitted: number | null | undefined;
  readonly canRollBack: boolean;
}

/** A newer completed checkpoint recovery passed over, and why. */
export interface SkippedCheckpoint {
  readonly checkpointId: number;
  readonly reason: string;
}

export interface RestorePlan {
  /** The checkpoint to restore; null when the job starts from nothing. */
  readonly restoreId: number | null;
  /** Newer completed checkpoints that did not verify. */
  readonly skipped: readonly SkippedCheckpoint[];
  /** Duplicate output is acceptable (`--accept-duplicates`). */
  readonly acceptDuplicates: boolean;
}

export type SinkRecoveryDecision =
  | {
      readonly kind: 'proceed';
      readonly rollBacks: ReadonlyArray<{ readonly uid: string; readonly name: string; readonly after: number }>;
      readonly warnings: readonly string[];
    }
  | { readonly kind: 'refuse'; readonly message: string };

const WAY_OUT = 'To restore anyway and accept duplicate output, run with --accept-duplicates (RunOptions.acceptDuplicates)';

export function decideSinkRecovery(plan: RestorePlan, sinks: readonly SinkCommitView[]): SinkRecoveryDecision {
  const rollBacks: Array<{ uid: string; name: string; after: number }> = [];
  const warnings: string[] = [];
  const restoring = plan.restoreId === null ? 'start from no checkpoint' : `restore checkpoint ${plan.restoreId}`;
  const skipped = plan.skipped.length === 0 ? '' : ` (passing over ${plan.skipped.map((s) => `checkpoint ${s.checkpointId}: ${s.reason}`).join('; ')})`;
  for (const sink of sinks) {
    const who = `sink '${sink.name}' (uid '${sink.uid}')`;
    const committed = sink.newestCommitted;
    if (committed === undefined) {
      if (plan.skipped.length === 0) continue;
      const problem = `${who} cannot tell which checkpoint it committed last, and recovery would ${restoring}${skipped}: output it committed for the newer checkpoint may be committed a second time`;
      if (!plan.acceptDuplicates) return { kind: 'refuse', message: `${problem}. ${WAY_OUT}.` };
      warnings.push(`${problem}; accepted (--accept-duplicates)`);
      continue;
    }
    if (committed === null || committed <= (plan.restoreId ?? 0)) continue;
    if (sink.canRollBack && plan.restoreId !== null) {
      rollBacks.push({ uid: sink.uid, name: sink.name, after: plan.restoreId });
      continue;
    }
    const problem =
      plan.restoreId === null
        ? `${who} already holds output committed for checkpoint ${committed}, but the job would ${restoring}${skipped}: that output would be written a second time. Resume from the run that wrote it (--from its job directory), or point the sink at an empty place`
        : `${who} has committed checkpoint ${committed}, but recovery would ${restoring}${skipped}: the output of checkpoints ${plan.restoreId + 1} to ${committed} would be committed a second time, and this sink cannot roll back`;
    if (!plan.acceptDuplicates) return { kind: 'refuse', message: `${problem}. ${WAY_OUT}.` };
    warnings.push(`${problem}; accepted (--accept-duplicates)`);
  }
  return { kind: 'proceed', rollBacks, warnings };
}
