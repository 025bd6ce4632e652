/** `GET /jobs/:id/taskmanagers`: the task managers of the newest attempt, as the job master sees them. */
import type { TaskManagerStatus } from '../../cluster/job-master/task-manager-roster.ts';
import { vertexId, type WebJob } from '../web-job.ts';
import type { TaskManagerEntry, TaskManagers } from './responses.ts';

/** Ms to 0.01: round trips in one host are fractions of a millisecond. */
const hundredths = (ms: number): number => Math.round(ms * 100) / 100;

export function taskManagers(job: WebJob): TaskManagers {
  return { taskmanagers: job.master.taskManagers().map(entryOf) };
}

function entryOf(t: TaskManagerStatus): TaskManagerEntry {
  const d = t.description;
  return {
    id: String(t.index),
    host: d.host,
    pid: d.pid,
    transport: d.transport,
    dataAddress: d.dataAddress,
    slotsNumber: d.slots,
    slotsUsed: t.slotsUsed,
    state: t.state,
    heartbeatAge: t.lastHeartbeatAgeMs === null ? null : Math.round(t.lastHeartbeatAgeMs),
    roundTrip: t.roundTripMs === null ? null : hundredths(t.roundTripMs),
    clockOffset: t.clockOffset === null ? null : { offset: hundredths(t.clockOffset.offsetMs), uncertainty: hundredths(t.clockOffset.uncertaintyMs) },
    dataBytesSent: t.data.bytesSent,
    dataBytesReceived: t.data.bytesReceived,
    dataMessagesSent: t.data.messagesSent,
    dataMessagesReceived: t.data.messagesReceived,
    subtasks: t.subtasks.map((s) => ({ vertex: vertexId(s.vertex), subtask: s.subtask })),
  };
}
