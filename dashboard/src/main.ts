/** The dashboard: live updates over server-sent events, seven tabs (State log only for the changelog backend), no network beyond this server. */
import './style.css';
import { renderAdvice } from './advice.ts';
import { renderChangelog } from './changelog.ts';
import { type CheckpointConfig, getJson, type LiveUpdate } from './api.ts';
import { CheckpointsView } from './checkpoints.ts';
import { bytes, count, el, table, time } from './dom.ts';
import { FlowView } from './flow-view.ts';
import { renderOverview } from './overview.ts';

const TABS = ['overview', 'checkpoints', 'flow', 'advice', 'changelog', 'config', 'exceptions'] as const;
type Tab = (typeof TABS)[number];

const section = (tab: Tab): HTMLElement => document.getElementById(`tab-${tab}`)!;
const flow = new FlowView(section('flow'));
const checkpoints = new CheckpointsView(section('checkpoints'), (cid) => {
  location.hash = `flow/${cid}`;
});
let configShownFor = '';
let jobId: string | null = null;

function currentTab(): { tab: Tab; arg: string | null } {
  const [name, arg] = location.hash.replace(/^#/, '').split('/');
  const tab = (TABS as readonly string[]).includes(name ?? '') ? (name as Tab) : 'overview';
  return { tab, arg: arg ?? null };
}

function showTab(): void {
  const { tab, arg } = currentTab();
  for (const t of TABS) section(t).hidden = t !== tab;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.getAttribute('data-tab') === tab);
  if (tab === 'flow' && arg !== null && /^\d+$/.test(arg)) flow.show(Number(arg));
  if (tab === 'advice' && jobId !== null) void renderAdvice(section('advice'), jobId);
  if (tab === 'changelog' && jobId !== null) void showChangelog(jobId);
}

/** The State log tab's figures; its link shows only for a job on the changelog backend (asked once, then while the tab is shown). */
let changelogAsked = false;
async function showChangelog(jid: string): Promise<void> {
  const uses = await renderChangelog(section('changelog'), jid);
  document.querySelector<HTMLElement>('#tabs a[data-tab="changelog"]')!.hidden = !uses;
}

function renderHeader(u: LiveUpdate): void {
  document.getElementById('job-title')!.textContent = `${u.job.name} (${u.job.jid})`;
  const state = document.getElementById('job-state')!;
  state.textContent = u.job.state;
  state.className = `state state-${u.job.state}`;
}

function renderExceptions(u: LiveUpdate): void {
  const rows = [...u.job.exceptions].reverse().map((e) => [time(e.timestamp), String(e.attempt), e.restarted ? 'restarted' : 'failed for good', e.exception]);
  section('exceptions').replaceChildren(
    el('h2', {}, `Exceptions and restarts (${u.job.restarts} restart${u.job.restarts === 1 ? '' : 's'})`),
    rows.length === 0
      ? el('p', { id: 'no-exceptions' }, 'No failures so far.')
      : table(['time', 'attempt', 'outcome', 'failure'], rows, { id: 'exceptions-table' }),
  );
}

/** A checkpointing setting with its unit (the REST API gives bare numbers, Flink's shape; -1 means off). */
function configValue(key: string, v: unknown): string {
  const ms = (n: number, off: string) => (n < 0 ? off : `${count(n)} ms`);
  const n = typeof v === 'number' ? v : Number.NaN;
  switch (key) {
    case 'interval':
      return ms(n, 'none (only the final checkpoint of a bounded job)');
    case 'timeout':
    case 'min_pause':
      return ms(n, 'none');
    case 'aligned_checkpoint_timeout':
      return n === 0 ? '0 ms (unaligned from the start)' : ms(n, 'none (unaligned checkpoints are off)');
    case 'max_concurrent':
      return `${n} checkpoint${n === 1 ? '' : 's'} at a time`;
    case 'tolerable_failed_checkpoints':
      return `${n} failed checkpoint${n === 1 ? '' : 's'} in a row`;
    case 'retained':
      return `${n} completed checkpoint${n === 1 ? '' : 's'}`;
    case 'externalization': {
      const e = v as { enabled?: boolean };
      return e.enabled ? 'kept when the job is cancelled or finishes' : 'deleted when the job is cancelled or finishes';
    }
    default:
      if (key.endsWith('_bytes') || key.endsWith('_size')) return bytes(n);
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
}

async function renderConfig(u: LiveUpdate): Promise<void> {
  if (configShownFor === u.job.jid) return;
  configShownFor = u.job.jid;
  const c = await getJson<CheckpointConfig>(`/jobs/${u.job.jid}/checkpoints/config`);
  const rows = Object.entries(c).map(([k, v]) => [k, configValue(k, v)]);
  const vertices = u.job.vertices.map((v) => [v.id, v.name, String(v.parallelism), v.operators.map((o) => `${o.name} (uid ${o.uid})`).join(' → ')]);
  section('config').replaceChildren(
    el('h2', {}, 'Checkpointing configuration'),
    table(['setting', 'value'], rows, { id: 'config-table' }),
    el('h2', {}, 'Vertices'),
    table(['id', 'name', 'parallelism', 'operators (chained)'], vertices),
  );
}

function onUpdate(u: LiveUpdate): void {
  renderHeader(u);
  renderOverview(section('overview'), u);
  checkpoints.update(u);
  flow.update(u);
  renderExceptions(u);
  void renderConfig(u);
  jobId = u.job.jid;
  // the advice is asked for only while its tab is shown: it reads the whole checkpoint history
  if (currentTab().tab === 'advice') void renderAdvice(section('advice'), u.job.jid);
  if (currentTab().tab === 'changelog' || !changelogAsked) {
    changelogAsked = true;
    void showChangelog(u.job.jid);
  }
  document.body.setAttribute('data-updates', String(Number(document.body.getAttribute('data-updates') ?? '0') + 1));
}

function connect(): void {
  const live = document.getElementById('live')!;
  const source = new EventSource('./events');
  source.addEventListener('update', (e) => {
    live.className = 'live on';
    onUpdate(JSON.parse((e as MessageEvent<string>).data) as LiveUpdate);
  });
  source.addEventListener('error', () => {
    live.className = 'live off';
    live.title = 'live updates stopped (the job ended or the server closed)';
    source.close();
  });
}

window.addEventListener('hashchange', showTab);
showTab();
connect();
