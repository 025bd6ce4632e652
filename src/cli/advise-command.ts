/**
 * `weir advise <job id | job dir | checkpoint dir>`: the checkpoint advisor over a running job's
 * figures (asked through its control endpoint, as `weir savepoint <job>` finds it), a job
 * directory's figures file (written by `weir run` at the job's end) or else the checkpoints
 * retained on disk. An existing directory wins over a job of the same name.
 */
import { existsSync } from 'node:fs';
import { readFiguresFile } from '../advisor/figures-file.ts';
import { figuresFromSnapshots } from '../advisor/from-snapshots.ts';
import { type Advice, advise } from '../advisor/rules.ts';
import { resolveStorageLocation } from '../storage/location.ts';
import { type ControlTarget, callControl, resolveJob } from './control-client.ts';
import { EXIT_OK, UsageError } from './exit.ts';
import { isJobIdLike } from './job-registry.ts';
import { humanBytes } from './format.ts';

export interface AdviseFlags {
  readonly json?: boolean;
}

export async function adviseCommand(given: string, flags: AdviseFlags): Promise<number> {
  const advice = await adviceOf(given);
  process.stdout.write(flags.json ? `${JSON.stringify(advice, null, 2)}\n` : formatAdvice(advice));
  return EXIT_OK;
}

async function adviceOf(given: string): Promise<Advice> {
  const isAddress = /^http:\/\//i.test(given);
  const dir = isAddress ? null : resolveStorageLocation(given, 'advise <job | dir>');
  if (dir !== null && existsSync(dir)) {
    const figures = readFiguresFile(dir) ?? (await figuresFromSnapshots(dir));
    if (figures.checkpoints.length === 0) throw new UsageError(`advise: no completed checkpoints under ${dir}`);
    return advise(figures);
  }
  if (!isAddress && !isJobIdLike(given)) throw new UsageError(`advise: no such directory: ${dir}`);
  let target: ControlTarget;
  try {
    target = resolveJob(given);
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`advise: '${given}' is neither a directory (no ${dir ?? given}) nor a running job: ${err.message}`);
    throw err;
  }
  const answer = await callControl(target, 'GET', '/advice');
  if (answer.kind !== 'too-few' && answer.kind !== 'advice') throw new Error(`${target.label} answered GET /advice without advice: ${JSON.stringify(answer)}`);
  return answer as unknown as Advice;
}

const pctOr = (x: number | null): string => (x === null ? 'unknown' : `${Math.round(x * 100)}%`);

/** The advice as text for a terminal. */
export function formatAdvice(a: Advice): string {
  if (a.kind === 'too-few') return `No advice yet: ${a.measured} checkpoints measured, need ${a.needed} (${a.source})\n`;
  const s = a.situation;
  const lines = [
    `Checkpoints of ${a.source}: ${s.measured} measured, ${s.completed} completed, ${s.timedOut} timed out, ${s.failed} failed`,
    `State: ${s.latestStateBytes === null ? 'unknown' : humanBytes(s.latestStateBytes)}` +
      (s.maxStateBytes === null || s.maxStateBytes === s.latestStateBytes ? '' : ` (largest ${humanBytes(s.maxStateBytes)})`) +
      (s.stateGrowthBytesPerCheckpoint === null ? '' : `, growing ${humanBytes(Math.max(0, Math.round(s.stateGrowthBytesPerCheckpoint)))} per checkpoint`),
    `Slowest checkpoint: ${s.maxDurationMs ?? 'unknown'} ms; interval ${s.intervalMs ?? 'none'} ms, timeout ${s.timeoutMs ?? 'unknown'} ms; ` +
      `backpressure ${pctOr(s.backpressureRatio)}; restarts ${s.restarts ?? 'unknown'}`,
    `Phases: sync up to ${s.maxSyncMs ?? 'unknown'} ms, async up to ${s.maxAsyncMs ?? 'unknown'} ms (sync ${pctOr(s.syncShare)} of both, async ${pctOr(s.asyncShare)} of checkpoint time); ` +
      `alignment up to ${s.maxAlignmentMs ?? 'unknown'} ms (${pctOr(s.alignmentShare)} of checkpoint time); ` +
      `in-flight up to ${s.maxInflightBytes === null ? 'unknown' : humanBytes(s.maxInflightBytes)}; last restore ${s.lastRestoreMs === null ? 'none' : `${s.lastRestoreMs} ms`}`,
  ];
  if (a.recommendations.length === 0) lines.push('Advice: keep the checkpointing as it is; no rule fired.');
  for (const r of a.recommendations) lines.push(`- ${r.change}`, `    because ${r.because} [${r.rule}]`, `    cost: ${r.cost}`);
  return `${lines.join('\n')}\n`;
}
