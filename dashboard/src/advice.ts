/** The Advice tab: the checkpoint advisor's answer for this job (`GET /jobs/:id/advice`): the situation in numbers and each recommendation with its figure, rule and cost. */
import { type Advice, getJson, type Situation } from './api.ts';
import { bytes, count, el, table } from './dom.ts';

const ms = (n: number | null): string => (n === null ? 'unknown' : `${count(n)} ms`);
const pct = (x: number | null): string => (x === null ? 'unknown' : `${Math.round(x * 100)}%`);
const size = (n: number | null): string => (n === null ? 'unknown' : bytes(n));

/** The situation as figure/value rows, each figure a rule reads. */
function situationRows(s: Situation): string[][] {
  return [
    ['checkpoints measured', `${s.measured}: ${s.completed} completed, ${s.timedOut} timed out (${pct(s.timeoutShare)}), ${s.failed} failed`],
    [
      'state',
      `${size(s.latestStateBytes)}${s.maxStateBytes === null || s.maxStateBytes === s.latestStateBytes ? '' : ` (largest ${bytes(s.maxStateBytes)})`}${s.stateGrowthBytesPerCheckpoint === null ? '' : `, growing ${bytes(Math.max(0, Math.round(s.stateGrowthBytesPerCheckpoint)))} per checkpoint`}`,
    ],
    ['slowest checkpoint', `${ms(s.maxDurationMs)} (interval ${s.intervalMs === null ? 'none' : ms(s.intervalMs)}, timeout ${ms(s.timeoutMs)})`],
    ['sync / async phase', `up to ${ms(s.maxSyncMs)} / ${ms(s.maxAsyncMs)} (sync ${pct(s.syncShare)} of both, async ${pct(s.asyncShare)} of checkpoint time)`],
    ['alignment', `up to ${ms(s.maxAlignmentMs)} (${pct(s.alignmentShare)} of checkpoint time)`],
    [
      'mode',
      s.unaligned === null
        ? 'unknown'
        : s.unaligned
          ? `unaligned (aligned timeout ${ms(s.alignedTimeoutMs)})`
          : 'aligned' + (s.incremental === null ? '' : s.incremental ? ', incremental' : ''),
    ],
    ['in-flight bytes (unaligned)', `up to ${size(s.maxInflightBytes)}`],
    ['backpressure (busiest vertex)', pct(s.backpressureRatio)],
    ['restarts', s.restarts === null ? 'unknown' : String(s.restarts)],
    ['restore time of the last recovery', s.lastRestoreMs === null ? 'no recovery yet' : ms(s.lastRestoreMs)],
  ];
}

function render(root: HTMLElement, a: Advice): void {
  const title = el('h2', {}, 'Checkpoint advice');
  if (a.kind === 'too-few') {
    root.replaceChildren(
      title,
      el('p', { id: 'advice-too-few' }, `No advice yet: ${a.measured} checkpoint${a.measured === 1 ? '' : 's'} measured, the advisor needs ${a.needed}.`),
    );
    return;
  }
  const recs =
    a.recommendations.length === 0
      ? el('p', { id: 'advice-keep' }, 'Keep the checkpointing as it is: no rule fired.')
      : table(
          ['change', 'because (figure)', 'rule', 'cost'],
          a.recommendations.map((r) => [el('code', {}, r.change), r.because, r.rule, r.cost]),
          { id: 'advice-recommendations' },
        );
  root.replaceChildren(
    title,
    el('h3', {}, 'Situation'),
    table(['figure', 'value'], situationRows(a.situation), { id: 'advice-situation' }),
    el('h3', {}, `Recommendations (${a.recommendations.length})`),
    recs,
  );
}

/** Fetches and shows the job's advice in `root`; an error shows in its place. */
export async function renderAdvice(root: HTMLElement, jid: string): Promise<void> {
  try {
    render(root, await getJson<Advice>(`/jobs/${jid}/advice`));
  } catch (err) {
    root.replaceChildren(el('h2', {}, 'Checkpoint advice'), el('p', { class: 'error' }, `No advice: ${(err as Error).message}`));
  }
}
