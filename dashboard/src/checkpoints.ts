/** The checkpoints view: counts and summary, the history, and drill-down per vertex and subtask. */
import { type CheckpointDetails, type CheckpointEntry, getJson, type LiveUpdate, type SubtaskCheckpointDetails, type SummaryFigure } from './api.ts';
import { bytes, el, millis, table, time } from './dom.ts';

const DISCARDED_TIP = 'completed, then deleted from checkpoint storage by retention (or when the job ended): it can no longer be restored';

/** In place of the replay button: the checkpoint's trace is gone, so there is nothing to replay. */
function notTraced(): HTMLElement {
  return el(
    'span',
    {
      class: 'not-traced',
      title: 'only retained checkpoints, those in progress and the newest few finished ones keep the barrier and ack times a replay needs',
    },
    'not traced',
  );
}

export class CheckpointsView {
  private readonly top = el('div');
  private readonly details = el('div', { id: 'checkpoint-details' });
  private selected: number | null = null;
  private jobId = '';
  private names = new Map<string, string>();

  constructor(
    root: HTMLElement,
    private readonly showFlow: (cid: number) => void,
  ) {
    root.replaceChildren(this.top, this.details);
  }

  update(u: LiveUpdate): void {
    this.jobId = u.job.jid;
    this.names = new Map(u.job.vertices.map((v) => [v.id, v.name]));
    const { counts, summary, latest, history } = u.checkpoints;
    const stat = (name: SummaryFigure, label: string, f: (n: number) => string) => {
      const s = summary[name];
      return [label, f(s.min), f(s.avg), f(s.p99), f(s.max)];
    };
    const rows = history.map((h) => this.historyRow(h));
    this.top.replaceChildren(
      el('h2', {}, 'Checkpoints'),
      table(
        ['triggered', 'in progress', 'completed', 'failed', 'restored', 'latest completed', 'latest failed', 'latest restore'],
        [
          [
            String(counts.total),
            String(counts.in_progress),
            String(counts.completed),
            String(counts.failed),
            String(counts.restored),
            latest.completed === null ? '–' : `${latest.completed.id} (${millis(latest.completed.end_to_end_duration)})`,
            latest.failed === null ? '–' : `${latest.failed.id}: ${latest.failed.failure_message ?? ''}`,
            latest.restored === null ? '–' : `${latest.restored.id} at ${time(latest.restored.restore_timestamp)}`,
          ],
        ],
        { id: 'checkpoint-counts' },
      ),
      el('h3', {}, 'Summary of completed checkpoints'),
      table(
        ['', 'min', 'avg', 'p99', 'max'],
        [
          stat('end_to_end_duration', 'end to end duration', millis),
          stat('checkpointed_size', 'checkpointed size', bytes),
          stat('state_size', 'full state size', bytes),
          stat('persisted_data', 'in-flight data persisted', bytes),
          stat('processed_data', 'records processed during alignment', String),
          stat('alignment_duration', 'alignment per subtask', millis),
        ],
        { id: 'checkpoint-summary' },
      ),
      el('h3', {}, 'History (newest first; click a row for details)'),
      el(
        'table',
        { id: 'checkpoint-history' },
        el('thead', {}, el('tr', {}, ...['id', 'status', 'type', 'triggered', 'duration', 'checkpointed', 'state', 'acks', ''].map((h) => el('th', {}, h)))),
        el('tbody', {}, ...rows),
      ),
    );
  }

  private historyRow(h: CheckpointEntry): HTMLTableRowElement {
    const flow = h.traced
      ? el('button', { class: 'flow-button', 'data-checkpoint': String(h.id), title: 'replay the barrier flow' }, 'barrier flow ▶')
      : notTraced();
    flow.addEventListener('click', (e) => {
      e.stopPropagation();
      if (h.traced) this.showFlow(h.id);
    });
    const row = el(
      'tr',
      { class: `status-${h.status}${h.id === this.selected ? ' selected' : ''}`, 'data-checkpoint': String(h.id) },
      el('td', {}, String(h.id)),
      el('td', {}, h.status, ...(h.discarded ? [' ', el('span', { class: 'discarded', title: DISCARDED_TIP }, '(discarded)')] : [])),
      el('td', {}, h.checkpoint_type + (h.is_final ? ' (final)' : '')),
      el('td', {}, time(h.trigger_timestamp)),
      el('td', {}, millis(h.end_to_end_duration)),
      el('td', {}, bytes(h.checkpointed_size)),
      el('td', {}, bytes(h.state_size)),
      el('td', {}, `${h.num_acknowledged_subtasks}/${h.num_subtasks}`),
      el('td', {}, flow),
    );
    row.addEventListener('click', () => void this.select(h.id));
    return row;
  }

  private vertexName(vid: string): string {
    return this.names.get(vid) ?? `vertex ${vid}`;
  }

  async select(cid: number): Promise<void> {
    this.selected = cid;
    for (const r of this.top.querySelectorAll('tr[data-checkpoint]')) r.classList.toggle('selected', r.getAttribute('data-checkpoint') === String(cid));
    const d = await getJson<CheckpointDetails>(`/jobs/${this.jobId}/checkpoints/details/${cid}`);
    const rows = Object.values(d.tasks).map((t) => {
      const b = el('button', { class: 'vertex-button', 'data-vertex': t.id }, this.vertexName(t.id));
      b.addEventListener('click', () => void this.selectVertex(cid, t.id));
      return [
        b,
        t.status,
        `${t.num_acknowledged_subtasks}/${t.num_subtasks}`,
        millis(t.end_to_end_duration),
        bytes(t.checkpointed_size),
        bytes(t.state_size),
        String(t.processed_data),
        bytes(t.persisted_data),
      ];
    });
    this.details.replaceChildren(
      el(
        'h3',
        { id: 'checkpoint-title' },
        `Checkpoint ${cid}: ${d.status}${d.failure_message ? ` (${d.failure_message})` : ''}${d.external_path ? ` at ${d.external_path}` : ''}${d.discarded ? ', discarded: retention deleted its files' : ''}`,
      ),
      table(['vertex', 'status', 'acks', 'trigger to last ack', 'checkpointed', 'state', 'records during alignment', 'in-flight persisted'], rows, {
        id: 'vertex-details',
      }),
      el('div', { id: 'subtask-details' }),
    );
  }

  private async selectVertex(cid: number, vid: string): Promise<void> {
    const d = await getJson<SubtaskCheckpointDetails>(`/jobs/${this.jobId}/checkpoints/details/${cid}/subtasks/${vid}`);
    const rows = d.subtasks.map((s) =>
      s.status !== 'completed'
        ? [String(s.index), s.status, '–', '–', '–', '–', '–', '–', '–', '–']
        : [
            String(s.index),
            s.status,
            millis(s.end_to_end_duration),
            millis(s.start_delay),
            millis(s.checkpoint.sync),
            millis(s.checkpoint.async),
            millis(s.alignment.duration),
            String(s.alignment.processed),
            `${bytes(s.checkpointed_size)} / ${bytes(s.state_size)}`,
            s.unaligned_checkpoint ? 'unaligned' : 'aligned',
          ],
    );
    this.details
      .querySelector('#subtask-details')
      ?.replaceChildren(
        el('h4', {}, `${this.vertexName(vid)}, per subtask`),
        table(
          [
            'subtask',
            'status',
            'trigger to ack',
            'first barrier after',
            'sync',
            'async',
            'alignment',
            'records during alignment',
            'checkpointed / state',
            'mode',
          ],
          rows,
          { id: 'subtask-table' },
        ),
      );
  }
}
