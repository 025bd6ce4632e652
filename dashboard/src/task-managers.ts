/** The task managers panel of the overview: where the job's subtasks run, whether each answers, its clock and data traffic. */
import type { LiveUpdate, TaskManagerEntry } from './api.ts';
import { bytes, count, el, millis, table } from './dom.ts';

const STATE_TIPS: Record<TaskManagerEntry['state'], string> = {
  starting: 'launched, not heard from yet',
  running: 'answering heartbeats',
  stopping: 'told to cancel its subtasks, not answered yet',
  dead: 'its thread or process ended, or it stopped answering heartbeats',
  stopped: 'shut down (the job ended, or the next attempt runs on new task managers)',
};

function clockOffset(t: TaskManagerEntry): string {
  if (t.clockOffset === null) return '–';
  const { offset, uncertainty } = t.clockOffset;
  return `${offset >= 0 ? '+' : ''}${millis(offset)} ± ${millis(uncertainty)}`;
}

/** The subtasks placed on it, by vertex name: `orders 0, count 0`. */
function subtasks(t: TaskManagerEntry, names: ReadonlyMap<string, string>): string {
  return t.subtasks.map((s) => `${names.get(s.vertex) ?? `vertex ${s.vertex}`} ${s.subtask}`).join(', ') || '–';
}

export function taskManagersPanel(u: LiveUpdate): HTMLElement[] {
  const tms = u.taskmanagers.taskmanagers;
  const title = el('h3', {}, `Task managers (${tms.length})`);
  if (tms.length === 0) return [title, el('p', { id: 'no-taskmanagers' }, 'Every subtask runs in the job master’s thread: no task managers.')];
  const names = new Map(u.job.vertices.map((v) => [v.id, v.name]));
  const rows = tms.map((t) => [
    t.id,
    t.host,
    t.pid === null ? '–' : String(t.pid),
    t.transport + (t.dataAddress === null ? '' : ` (${t.dataAddress})`),
    el('span', { class: `tm-state tm-${t.state}`, title: STATE_TIPS[t.state] }, t.state),
    t.slotsNumber === null ? String(t.slotsUsed) : `${t.slotsUsed} of ${t.slotsNumber}`,
    t.heartbeatAge === null ? '–' : `${millis(t.heartbeatAge)} ago`,
    millis(t.roundTrip),
    clockOffset(t),
    `${bytes(t.dataBytesSent)} (${count(t.dataMessagesSent)} msgs)`,
    `${bytes(t.dataBytesReceived)} (${count(t.dataMessagesReceived)} msgs)`,
    subtasks(t, names),
  ]);
  const headers = [
    '#',
    'host',
    'pid',
    'transport',
    'state',
    'slots used',
    'last heartbeat',
    'round trip',
    'clock offset',
    'data sent',
    'data received',
    'subtasks',
  ];
  return [title, table(headers, rows, { id: 'taskmanagers-table' })];
}
