/**
 * The barrier-flow view: the subtasks of the job as SVG, and the selected checkpoint replayed in
 * time order from the events the job master recorded (GET .../details/:cid/flow): the trigger,
 * barriers injected at the sources and moving along the channels, channels held back while a
 * subtask aligns, barriers overtaking buffers when unaligned, the sync then async phase to
 * storage, acks to the coordinator, completion and notifications. Play, pause, step and speed;
 * "follow live" switches to each new checkpoint as it starts.
 */
import { type Flow, type FlowEvent, getJson, type LiveUpdate } from './api.ts';
import { bytes, el, millis, svg, svgName } from './dom.ts';
import { type FlowLayout, key, layoutFlow, NODE_H, NODE_W } from './flow-layout.ts';

/** Queued buffers drawn ahead of a barrier at most (more are counted in words). */
const MAX_BUFFERS_DRAWN = 6;

/** Fonts of the vertex and subtask labels (style.css), to fit names in their boxes. */
const VERTEX_LABEL_FONT = '11px system-ui, sans-serif';
const SUBTASK_FONT = '12px system-ui, sans-serif';

/** Checkpoint milliseconds shown per real second. */
const SPEEDS = [0.5, 2, 10, 50, 250, 1000];

export class FlowView {
  private flow: Flow | null = null;
  private layout: FlowLayout | null = null;
  private t = 0;
  /** Events shown in the log: set by a step (one event at a time), null to show every event up to `t`. */
  private shown: number | null = null;
  /** The checkpoint last asked for: a slower answer for an earlier one is dropped. */
  private wanted: number | null = null;
  private playing = false;
  private speed = 10;
  private lastFrame: number | null = null;
  private jobId = '';
  private latestSeen: number | null = null;
  /** A checkpoint asked for (by the address) before the first update told the job's id. */
  private pinned: number | null = null;
  private readonly picker = el('select', { id: 'flow-checkpoint' });
  private readonly follow = el('input', { type: 'checkbox', id: 'flow-follow' });
  private readonly playButton = el('button', { id: 'flow-play' }, 'play ▶');
  private readonly stepButton = el('button', { id: 'flow-step' }, 'step ▶|');
  private readonly restartButton = el('button', { id: 'flow-restart' }, '|◀ restart');
  private readonly speedSelect = el('select', { id: 'flow-speed' }, ...SPEEDS.map((s) => el('option', { value: String(s) }, `${s} ms per second`)));
  private readonly slider = el('input', { type: 'range', id: 'flow-time', min: '0', max: '1000', value: '0' });
  private readonly clock = el('span', { id: 'flow-clock' }, '');
  private readonly stage = el('div', { id: 'flow-stage' });
  private readonly log = el('ol', { id: 'flow-log' });
  private readonly title = el('h2', { id: 'flow-title' }, 'Barrier flow');

  constructor(root: HTMLElement) {
    this.follow.checked = true;
    this.speedSelect.value = String(this.speed);
    this.playButton.addEventListener('click', () => this.setPlaying(!this.playing));
    this.stepButton.addEventListener('click', () => this.step());
    this.restartButton.addEventListener('click', () => {
      this.t = 0;
      this.shown = null;
      this.render();
    });
    this.speedSelect.addEventListener('change', () => (this.speed = Number(this.speedSelect.value)));
    this.slider.addEventListener('input', () => {
      this.setPlaying(false);
      this.t = (Number(this.slider.value) / 1000) * this.endTime();
      this.shown = null;
      this.render();
    });
    this.picker.addEventListener('change', () => {
      this.follow.checked = false;
      void this.load(Number(this.picker.value), true);
    });
    root.replaceChildren(
      this.title,
      el(
        'div',
        { class: 'flow-controls' },
        el('label', {}, 'checkpoint ', this.picker),
        el('label', {}, this.follow, ' follow live'),
        this.restartButton,
        this.playButton,
        this.stepButton,
        el('label', {}, 'speed ', this.speedSelect),
        this.slider,
        this.clock,
      ),
      el('div', { class: 'flow-main' }, this.stage, el('div', { class: 'flow-side' }, legend(), el('h3', {}, 'Events so far'), this.log)),
    );
    requestAnimationFrame((now) => this.frame(now));
  }

  /** A live update: new checkpoints join the picker; following, the newest is loaded and played. */
  update(u: LiveUpdate): void {
    this.jobId = u.job.jid;
    if (this.pinned !== null) {
      const cid = this.pinned;
      this.pinned = null;
      this.latestSeen = u.checkpoints.history[0]?.id ?? null;
      void this.load(cid, true);
    }
    // Only traced checkpoints can be replayed; the one shown stays in the picker even once its trace is gone.
    const ids = u.checkpoints.history.filter((h) => h.traced).map((h) => h.id);
    const current = this.wanted ?? this.flow?.checkpoint_id ?? null;
    this.picker.replaceChildren(...ids.map((id) => el('option', { value: String(id) }, `${id}`)));
    if (current !== null) this.choose(current);
    const newest = ids[0] ?? null;
    if (this.follow.checked && newest !== null && newest !== this.latestSeen) {
      this.latestSeen = newest;
      void this.load(newest, true);
    } else if (this.flow !== null && this.flow.status === 'IN_PROGRESS') {
      void this.load(this.flow.checkpoint_id, false);
    }
  }

  /** Shows checkpoint `cid` from its start and stops following live; before the first update, once it came. */
  show(cid: number): void {
    this.follow.checked = false;
    if (this.jobId === '') this.pinned = cid;
    else void this.load(cid, true);
  }

  /** Shows checkpoint `cid`, from its start when `fromStart` (and plays it). */
  async load(cid: number, fromStart: boolean): Promise<void> {
    this.wanted = cid;
    this.choose(cid);
    const flow = await getJson<Flow>(`/jobs/${this.jobId}/checkpoints/details/${cid}/flow`);
    if (this.wanted !== cid) return; // another checkpoint was chosen meanwhile
    const fresh = this.flow?.checkpoint_id !== cid;
    this.flow = flow;
    if (fresh || this.layout === null) this.layout = layoutFlow(flow);
    this.choose(flow.checkpoint_id);
    const name = `${flow.kind} ${flow.checkpoint_id}`;
    if (!flow.traced) {
      // Its trace was dropped (only retained, in-progress and the newest few checkpoints keep one): nothing to replay.
      this.setPlaying(false);
      this.title.textContent = `Barrier flow of ${name}: not traced`;
      this.stage.replaceChildren(
        el(
          'p',
          { id: 'flow-not-traced', class: 'not-traced' },
          `${name} was not traced: only retained checkpoints, those in progress and the newest few finished ones keep the barrier and ack times a replay needs.`,
        ),
      );
      this.log.replaceChildren();
      this.clock.textContent = '';
      return;
    }
    this.title.textContent = `Barrier flow of ${name} (${flow.alignment}${flow.aligned_timeout !== null ? `, switches to unaligned after ${flow.aligned_timeout} ms` : ''}): ${flow.status}`;
    if (fromStart) {
      this.shown = null;
      this.t = 0;
      this.speed = fitSpeed(this.endTime());
      this.speedSelect.value = String(this.speed);
      this.setPlaying(true);
    } else if (this.follow.checked) {
      // Following live, the flow was first loaded while the checkpoint had just started: as it
      // grows, speed the playback up so the whole checkpoint still plays in about ten seconds.
      this.speed = Math.max(this.speed, fitSpeed(this.endTime()));
      this.speedSelect.value = String(this.speed);
    }
    this.render();
  }

  /** Selects `cid` in the picker, adding it when it is not listed (a checkpoint whose trace is gone). */
  private choose(cid: number): void {
    if (!this.picker.querySelector(`option[value="${cid}"]`)) this.picker.append(el('option', { value: String(cid) }, String(cid)));
    this.picker.value = String(cid);
  }

  private endTime(): number {
    const evs = this.flow?.events ?? [];
    let end = 0;
    for (const e of evs) end = Math.max(end, e.t, e.type === 'async' || e.type === 'sync' ? e.t + (e.duration ?? 0) : 0, e.until ?? 0);
    return end;
  }

  private setPlaying(on: boolean): void {
    this.playing = on;
    if (on) this.shown = null;
    if (on && this.t >= this.endTime()) this.t = 0;
    this.playButton.textContent = on ? 'pause ||' : 'play ▶';
    this.lastFrame = null;
  }

  /** Shows the next event (one at a time, also among events at the same time) and moves the clock to it. */
  private step(): void {
    this.setPlaying(false);
    const events = this.flow?.events ?? [];
    const shown = this.shownCount();
    if (shown < events.length) {
      this.shown = shown + 1;
      this.t = events[shown]!.t;
    } else {
      this.t = this.endTime();
    }
    this.render();
  }

  /** How many events (a prefix: they are in time order) the log shows. */
  private shownCount(): number {
    const events = this.flow?.events ?? [];
    return this.shown ?? events.filter((e) => e.t <= this.t + 1e-9).length;
  }

  private frame(now: number): void {
    if (this.playing && this.flow !== null) {
      if (this.lastFrame !== null) this.t += ((now - this.lastFrame) / 1000) * this.speed;
      const end = this.endTime();
      if (this.t >= end) {
        this.t = end;
        if (this.flow.status !== 'IN_PROGRESS') this.setPlaying(false);
      }
      this.lastFrame = now;
      this.render();
    }
    requestAnimationFrame((n) => this.frame(n));
  }

  private render(): void {
    const flow = this.flow;
    const layout = this.layout;
    if (flow === null || layout === null || !flow.traced) return;
    const end = this.endTime();
    const finished = this.t >= end && flow.status !== 'IN_PROGRESS';
    this.slider.value = String(end === 0 ? 1000 : Math.round((this.t / end) * 1000));
    this.clock.textContent = `t = ${this.t.toFixed(1)} / ${end.toFixed(1)} ms after the trigger`;
    this.stage.replaceChildren(drawFlow(flow, layout, this.t, finished));
    const shown = flow.events.slice(0, this.shownCount());
    const names = new Map(flow.vertices.map((v) => [v.id, v.name]));
    if (this.log.childElementCount !== shown.length) this.log.replaceChildren(...shown.map((e) => logItem(e, names)));
  }
}

function fitSpeed(endMs: number): number {
  // About ten seconds for the whole checkpoint, at least.
  return SPEEDS.find((s) => endMs / s <= 10) ?? SPEEDS.at(-1)!;
}

/** The log's words for an event; subtasks by their vertex's name (`orders#0`). */
function describe(e: FlowEvent, names: ReadonlyMap<string, string>): string {
  const name = (vertex: string | undefined) => (vertex === undefined ? '?' : (names.get(vertex) ?? `vertex ${vertex}`));
  const at = e.vertex !== undefined ? ` ${name(e.vertex)}#${e.subtask}` : '';
  switch (e.type) {
    case 'trigger':
      return 'coordinator triggers the checkpoint';
    case 'inject':
      return `source${at} injects the barrier`;
    case 'barrier':
      return `barrier ${name(e.from?.vertex)}#${e.from?.subtask} → ${name(e.to?.vertex)}#${e.to?.subtask}${e.overtook ? ' (overtook queued buffers)' : (e.ahead ?? 0) > 0 ? ` (behind ${e.ahead} queued)` : ''}`;
    case 'blocked':
      return `${at.trim()} holds channel ${e.channel} back until ${millis(e.until)}`;
    case 'alignment':
      return `${at.trim()} starts aligning (${millis(e.duration)}, ${e.records ?? 0} records processed meanwhile)`;
    case 'switch-to-unaligned':
      return `${at.trim()} alignment timed out: switches to unaligned`;
    case 'sync':
      return `${at.trim()} sync phase (${millis(e.duration)})`;
    case 'async':
      return `${at.trim()} async phase to storage (${millis(e.duration)}, ${bytes(e.bytes ?? 0)}${e.inflight_bytes ? ` + ${bytes(e.inflight_bytes)} in flight` : ''})`;
    case 'ack':
      return `${at.trim()} acknowledges to the coordinator`;
    case 'complete':
      return 'checkpoint complete: metadata durable';
    case 'failed':
      return `checkpoint failed: ${e.reason ?? ''}`;
    case 'notify':
      return 'coordinator notifies every subtask (sinks commit)';
    default:
      return e.type;
  }
}

function logItem(e: FlowEvent, names: ReadonlyMap<string, string>): HTMLLIElement {
  const li = el('li', { 'data-type': e.type, 'data-t': String(e.t) }, `+${e.t.toFixed(1)} ms  ${describe(e, names)}`);
  if (e.vertex !== undefined) li.setAttribute('data-vertex', e.vertex);
  if (e.subtask !== undefined) li.setAttribute('data-subtask', String(e.subtask));
  if (e.channel !== undefined) li.setAttribute('data-channel', e.channel);
  return li;
}

function legend(): HTMLElement {
  // The seeds' own words (Chinese) are in each item's tooltip: machines without CJK fonts would draw boxes.
  const item = (cls: string, text: string, seedTerm: string) => el('li', { title: seedTerm }, el('span', { class: `swatch ${cls}` }), text);
  return el(
    'div',
    { class: 'legend flow-legend', id: 'flow-legend' },
    el('h3', {}, 'Legend'),
    el(
      'ul',
      {},
      item(
        'sw-barrier',
        'Barrier, aligned checkpoint: injected at the sources, it flows in order with the data, behind every buffer queued before it.',
        '屏障 (Barrier), 对齐',
      ),
      item('sw-buffer', 'Buffers queued ahead of an aligned barrier: it reaches the subtask only after them.', '缓冲区'),
      item(
        'sw-blocked',
        'Alignment blocking: the barrier arrived on this channel; the subtask holds the channel back until every input delivered it.',
        '对齐阻塞',
      ),
      item(
        'sw-overtake',
        'Unaligned checkpoint: the barrier overtakes the queued buffers; they are persisted as in-flight data of the checkpoint.',
        '非对齐检查点',
      ),
      item(
        'sw-switch',
        'Timeout switch: an aligned checkpoint whose alignment outlasts the aligned timeout switches to unaligned at that subtask.',
        '对齐超时后自动切换为非对齐',
      ),
      item('sw-sync', 'Sync phase: a consistent view of state is captured and the barrier forwarded.', '同步阶段'),
      item('sw-async', 'Async phase: the snapshot is written to checkpoint storage off the record path.', '异步阶段'),
      item('sw-ack', 'Ack: the subtask reports its state handles to the coordinator.', '确认 (ack)'),
      item('sw-complete', 'Complete: metadata durable; then notifications go out and sinks commit.', '完成, 通知'),
    ),
  );
}

function center(p: { x: number; y: number }): { x: number; y: number } {
  return { x: p.x + NODE_W / 2, y: p.y + NODE_H / 2 };
}

function drawFlow(flow: Flow, layout: FlowLayout, t: number, finished: boolean): SVGElement {
  const s = svg('svg', {
    id: 'flow-svg',
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    width: layout.width,
    height: layout.height,
    'data-checkpoint': String(flow.checkpoint_id),
    'data-time': t.toFixed(1),
    'data-finished': String(finished),
  });
  const active = (e: FlowEvent) => e.t <= t && t < e.t + (e.duration ?? 0);
  const started = (e: FlowEvent) => e.t <= t;
  const events = flow.events;
  for (const b of layout.vertexBoxes) {
    s.append(
      svg('rect', { x: b.x, y: b.y, width: NODE_W + 16, height: b.h, rx: 10, class: 'vertex-box' }),
      svgName({ x: b.x + 8, y: b.y + 15, class: 'vertex-box-label' }, b.name, NODE_W, VERTEX_LABEL_FONT),
    );
  }
  // channels, blocked channels, barriers travelling
  for (const c of flow.channels) {
    const a = layout.subtasks.get(key(c.from.vertex, c.from.subtask));
    const b = layout.subtasks.get(key(c.to.vertex, c.to.subtask));
    if (a === undefined || b === undefined) continue;
    const x1 = a.x + NODE_W;
    const y1 = a.y + NODE_H / 2;
    const x2 = b.x;
    const y2 = b.y + NODE_H / 2;
    const blocked = events.some((e) => e.type === 'blocked' && e.channel === c.id && e.t <= t && t < (e.until ?? 0));
    const barrier = events.find((e) => e.type === 'barrier' && e.channel === c.id);
    const delivered = barrier !== undefined && barrier.t <= t;
    s.append(svg('line', { x1, y1, x2, y2, class: `channel${blocked ? ' blocked' : ''}${delivered ? ' delivered' : ''}`, 'data-channel': c.id }));
    if (blocked)
      s.append(
        svg('rect', { x: x2 - 16, y: y2 - 14, width: 3, height: 9, class: 'blocked-mark' }),
        svg('rect', { x: x2 - 11, y: y2 - 14, width: 3, height: 9, class: 'blocked-mark' }),
      );
    if (barrier !== undefined && (barrier.sent ?? 0) <= t && t < barrier.t) {
      const sent = barrier.sent ?? 0;
      const f = barrier.t === sent ? 1 : (t - sent) / (barrier.t - sent);
      const cx = x1 + (x2 - x1) * f;
      const cy = y1 + (y2 - y1) * f;
      // The buffers queued ahead of an aligned barrier drain as it moves up to the subtask.
      const ahead = barrier.overtook ? 0 : Math.ceil(Math.max(0, barrier.ahead ?? 0) * (1 - f));
      for (let i = 0; i < Math.min(ahead, MAX_BUFFERS_DRAWN); i++) {
        const g = 1 - (i + 1) / (MAX_BUFFERS_DRAWN + 1);
        s.append(svg('rect', { x: x2 + (cx - x2) * g - 4, y: y2 + (cy - y2) * g - 4, width: 8, height: 8, class: 'buffer', 'data-channel': c.id }));
      }
      if (ahead > MAX_BUFFERS_DRAWN) s.append(svg('text', { x: (cx + x2) / 2, y: (cy + y2) / 2 - 8, class: 'buffer-count' }, `${ahead} queued`));
      s.append(svg('circle', { cx, cy, r: 6, class: `barrier-dot${barrier.overtook ? ' overtaking' : ''}`, 'data-channel': c.id }));
    }
  }
  const coord = layout.coordinator;
  const storage = layout.storage;
  // subtasks with their phase
  for (const [k, p] of layout.subtasks) {
    const [vertex, sub] = k.split('/');
    const mine = events.filter((e) => e.vertex === vertex && e.subtask === Number(sub));
    const aligning = mine.some((e) => e.type === 'alignment' && e.t <= t && t < e.t + (e.duration ?? 0));
    const sync = mine.some((e) => e.type === 'sync' && active(e));
    const async = mine.find((e) => e.type === 'async' && active(e));
    const acked = mine.find((e) => e.type === 'ack' && started(e));
    const switched = mine.some((e) => e.type === 'switch-to-unaligned' && started(e));
    const injected = mine.some((e) => e.type === 'inject' && started(e));
    const cls = [
      'subtask',
      aligning ? 'aligning' : '',
      sync ? 'syncing' : '',
      async ? 'uploading' : '',
      acked ? 'acked' : '',
      switched ? 'switched' : '',
      injected ? 'injected' : '',
    ]
      .filter(Boolean)
      .join(' ');
    s.append(
      svg(
        'g',
        { class: cls, 'data-subtask': k },
        svg('rect', { x: p.x, y: p.y, width: NODE_W, height: NODE_H, rx: 6 }),
        svgName({ x: p.x + 8, y: p.y + 21 }, p.name, NODE_W - 16, SUBTASK_FONT, ` #${p.subtask}${acked ? ' (acked)' : ''}`),
      ),
    );
    const c = center(p);
    if (async) s.append(svg('line', { x1: c.x, y1: p.y + NODE_H, x2: storage.x, y2: storage.y, class: 'upload-line' }));
    if (acked)
      s.append(svg('line', { x1: c.x, y1: p.y, x2: coord.x, y2: coord.y + 18, class: `ack-line${t - acked.t < 0.15 * Math.max(1, t) ? ' fresh' : ''}` }));
  }
  const complete = events.find((e) => e.type === 'complete' && started(e));
  const failed = events.find((e) => e.type === 'failed' && started(e));
  const notify = events.find((e) => e.type === 'notify' && started(e));
  if (notify)
    for (const p of layout.subtasks.values()) s.append(svg('line', { x1: coord.x, y1: coord.y + 18, x2: center(p).x, y2: p.y, class: 'notify-line' }));
  const coordClass = `coordinator${complete ? ' complete' : ''}${failed ? ' failed' : ''}`;
  s.append(
    svg(
      'g',
      { class: coordClass, id: 'flow-coordinator' },
      svg('rect', { x: coord.x - 120, y: coord.y - 18, width: 240, height: 36, rx: 8 }),
      svg(
        'text',
        { x: coord.x, y: coord.y + 5, 'text-anchor': 'middle' },
        complete ? 'coordinator: complete' : failed ? 'coordinator: failed' : 'checkpoint coordinator',
      ),
    ),
    svg(
      'g',
      { class: 'storage', id: 'flow-storage' },
      svg('rect', { x: storage.x - 100, y: storage.y - 16, width: 200, height: 32, rx: 8 }),
      svg('text', { x: storage.x, y: storage.y + 5, 'text-anchor': 'middle' }, 'checkpoint storage'),
    ),
  );
  return s;
}
