/**
 * How a job's status moves, in one pure place: CREATED, then RUNNING and RESTARTING in turn, until
 * one of the terminal statuses FINISHED, FAILED or CANCELED, which nothing leaves.
 */
import type { JobStatus } from './job-events.ts';
import { nextPhase, type TransitionTable } from '../../core/transition-table.ts';

/** What moves a job's status: an attempt runs, fails (and may restart), every subtask finished, the job fails for good or is cancelled. */
export type JobStatusEvent = 'run' | 'restart' | 'finish' | 'fail' | 'cancel';

export const JOB_STATUS_EVENTS: readonly JobStatusEvent[] = ['run', 'restart', 'finish', 'fail', 'cancel'];

export const JOB_STATUS_TRANSITIONS: TransitionTable<JobStatus, JobStatusEvent> = {
  // A job fails for good only after its failing attempt stopped and the restart strategy gave up.
  CREATED: { run: 'RUNNING', restart: 'RESTARTING', cancel: 'CANCELED' },
  RUNNING: { restart: 'RESTARTING', finish: 'FINISHED', cancel: 'CANCELED' },
  // The attempt after a failure may fail again while it deploys, before it ran.
  RESTARTING: { run: 'RUNNING', restart: 'RESTARTING', fail: 'FAILED', cancel: 'CANCELED' },
  FINISHED: {},
  FAILED: {},
  CANCELED: {},
};

/** The status after `event`; an event the status cannot receive (anything after a terminal one) is a programmer error. */
export function nextJobStatus(status: JobStatus, event: JobStatusEvent): JobStatus {
  return nextPhase(JOB_STATUS_TRANSITIONS, 'job status', status, event);
}

/** FINISHED, FAILED and CANCELED: the job ended, nothing follows. */
export function isTerminalStatus(status: JobStatus): boolean {
  return status === 'FINISHED' || status === 'FAILED' || status === 'CANCELED';
}
