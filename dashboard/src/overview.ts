/** The overview: the job graph with per-vertex rates and backpressure colours, the job's figures and its task managers. */
import { getJson, type HaStatus, type LiveUpdate } from './api.ts';
import { count, el, rate, svg, svgName, table } from './dom.ts';
import { columnsOf } from './layout.ts';
import { taskManagersPanel } from './task-managers.ts';

const W = 210;
const H = 86;
const GAP_X = 90;
const GAP_Y = 30;
/** The vertex name's font (style.css `.vertex .vertex-name`), to fit it in its box. */
const NAME_FONT = '700 13px system-ui, sans-serif';

/** The leader's view of its standbys (`GET /ha`), asked at most every 2 s while the job runs under HA. */
let ha: HaStatus | null = null;
let haAskedAt = 0;
function refreshHa(): void {
  if (Date.now() - haAskedAt < 2000) return;
  haAskedAt = Date.now();
  getJson<HaStatus>('./ha').then(
    (answer) => (ha = answer),
    () => (ha = null),
  );
}

/** High availability: this leader's epoch and store, and the standbys waiting to take over. */
function haPanel(epoch: number): HTMLElement[] {
  if (epoch === 0) return [];
  refreshHa();
  if (ha === null || ha.role !== 'leader') return [el('h3', {}, `High availability: leader epoch ${epoch}`)];
  const rows = ha.standbys.map((w) => [w.holder, w.address ?? '–', `${Math.round(w['seen-ms-ago'] / 100) / 10} s ago`]);
  return [
    el('h3', {}, `High availability: leader epoch ${ha['leader-epoch']} in ${ha.store}`),
    rows.length === 0
      ? el('p', { id: 'ha-no-standbys' }, 'No standby waits: if this job master dies, the job stays down until one starts.')
      : table(['standby', 'address', 'last heard'], rows, { id: 'ha-standbys' }),
  ];
}

export function renderOverview(root: HTMLElement, u: LiveUpdate): void {
  const { job, backpressure } = u;
  const inputsOf = new Map(job.plan.nodes.map((n) => [n.id, n.inputs]));
  const cols = columnsOf(job.vertices.map((v) => ({ id: v.id, inputs: (inputsOf.get(v.id) ?? []).map((i) => i.id) })));
  const rows = new Map<number, number>();
  const pos = new Map<string, { x: number; y: number }>();
  for (const v of job.vertices) {
    const c = cols.get(v.id) ?? 0;
    const r = rows.get(c) ?? 0;
    rows.set(c, r + 1);
    pos.set(v.id, { x: 20 + c * (W + GAP_X), y: 20 + r * (H + GAP_Y) });
  }
  const width = 40 + (Math.max(...cols.values()) + 1) * (W + GAP_X);
  const height = 40 + Math.max(...rows.values()) * (H + GAP_Y);
  const g = svg('svg', { id: 'job-graph', viewBox: `0 0 ${width} ${height}`, width, height });
  g.append(
    svg(
      'defs',
      {},
      svg(
        'marker',
        { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto' },
        svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#64748b' }),
      ),
    ),
  );
  for (const v of job.vertices) {
    const to = pos.get(v.id)!;
    for (const input of inputsOf.get(v.id) ?? []) {
      const from = pos.get(input.id)!;
      const x1 = from.x + W;
      const y1 = from.y + H / 2;
      const x2 = to.x;
      const y2 = to.y + H / 2;
      g.append(svg('path', { d: `M${x1},${y1} C${x1 + 40},${y1} ${x2 - 40},${y2} ${x2},${y2}`, class: 'edge', 'marker-end': 'url(#arrow)' }));
      g.append(svg('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 6, class: 'edge-label' }, input.ship_strategy));
    }
  }
  for (const v of job.vertices) {
    const p = pos.get(v.id)!;
    const bp = backpressure.vertices.find((b) => b.id === v.id);
    const level = bp?.backpressureLevel ?? 'ok';
    g.append(
      svg(
        'g',
        { class: `vertex bp-${level}`, 'data-vertex': v.id, transform: `translate(${p.x},${p.y})` },
        svg('rect', { width: W, height: H, rx: 8 }),
        svgName({ x: 10, y: 20, class: 'vertex-name' }, v.name, W - 20, NAME_FONT),
        svg('text', { x: 10, y: 40 }, `parallelism ${v.parallelism} · ${v.status}`),
        svg(
          'text',
          { x: 10, y: 58, class: 'vertex-rates' },
          `in ${rate(v.metrics['read-records-per-second'] ?? 0)} · out ${rate(v.metrics['write-records-per-second'] ?? 0)}`,
        ),
        svg('text', { x: 10, y: 76, class: 'vertex-bp' }, `backpressure ${level} (${Math.round((bp?.maxBackPressuredRatio ?? 0) * 100)}%)`),
      ),
    );
  }
  // Records count every attempt (as /metrics does): a restart replays input, so this attempt's alone would read as loss.
  const ended = job['end-time'] !== -1;
  const figures = table(
    [
      'state',
      'attempt',
      'restarts',
      'restored from',
      'leader epoch',
      'records in (all attempts)',
      'records out (all attempts)',
      'this attempt: in / out',
      ended ? 'ran for' : 'uptime',
    ],
    [
      [
        job.state,
        String(job.attempt),
        String(job.restarts),
        job['restored-from'] === null ? '–' : `checkpoint ${job['restored-from']}`,
        job['leader-epoch'] === 0 ? '– (no HA)' : String(job['leader-epoch']),
        count(job['records-in']),
        count(job['records-out']),
        `${count(job['records-in-attempt'])} / ${count(job['records-out-attempt'])}`,
        `${Math.round(job.duration / 1000)} s${ended ? ' (ended)' : ''}`,
      ],
    ],
    { id: 'job-figures' },
  );
  const bpRows = backpressure.vertices.flatMap((v) =>
    v.subtasks.map((s) => [
      v.name,
      String(s.subtask),
      `${Math.round(s.backPressuredRatio * 100)}%`,
      el('span', { class: `level bp-${s.backpressureLevel}` }, s.backpressureLevel),
    ]),
  );
  root.replaceChildren(
    el('h2', {}, 'Job graph'),
    el(
      'div',
      { class: 'legend' },
      'backpressure: ',
      el('span', { class: 'level bp-ok' }, 'ok ≤ 10%'),
      el('span', { class: 'level bp-low' }, 'low ≤ 50%'),
      el('span', { class: 'level bp-high' }, 'high'),
    ),
    el('div', { class: 'graph-wrap' }, g),
    figures,
    el('h3', {}, 'Backpressure per subtask (share of time blocked on output)'),
    table(['vertex', 'subtask', 'blocked', 'level'], bpRows, { id: 'backpressure-table' }),
    ...haPanel(job['leader-epoch']),
    ...taskManagersPanel(u),
  );
}
