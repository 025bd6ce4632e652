/**
 * The phases of an attempt on task managers, as the job master's side of them (RemoteAttempt)
 * lives them, and the one table that moves them.
 */
import { nextPhase, type TransitionTable } from '../../core/transition-table.ts';

/**
 * `deploying`: waits for every task manager's `deployed`; `deployed`: deployed, the job master
 * reconciles the sinks; `opening`: waits for every `opened`; `opened`: waits for the job master's
 * start; `running`; `failed`: its deploy or open failed, the job master tears it down next;
 * `ending`: told to cancel, waits for the task managers' answers (or the watchdog); `ended`: every
 * task manager answered or was terminated; `abandoned`: the process died, nothing answers any more.
 */
export type RemoteAttemptPhase = 'deploying' | 'deployed' | 'opening' | 'opened' | 'running' | 'failed' | 'ending' | 'ended' | 'abandoned';

/**
 * `deployed`, `opened`: every task manager answered; `fail`: one answered with a failure or died
 * before the attempt opened; `teardown`: the attempt is cancelled; `stopped`: every task manager
 * stopped or was terminated; `abandon`: the process died.
 */
export type RemoteAttemptEvent = 'deployed' | 'open' | 'opened' | 'start' | 'fail' | 'teardown' | 'stopped' | 'abandon';

export const REMOTE_ATTEMPT_PHASES: readonly RemoteAttemptPhase[] = [
  'deploying',
  'deployed',
  'opening',
  'opened',
  'running',
  'failed',
  'ending',
  'ended',
  'abandoned',
];
export const REMOTE_ATTEMPT_EVENTS: readonly RemoteAttemptEvent[] = ['deployed', 'open', 'opened', 'start', 'fail', 'teardown', 'stopped', 'abandon'];

export const REMOTE_ATTEMPT_TRANSITIONS: TransitionTable<RemoteAttemptPhase, RemoteAttemptEvent> = {
  // The job master holds the attempt only once it deployed: it cannot cancel or abandon it before.
  deploying: { deployed: 'deployed', fail: 'failed' },
  deployed: { open: 'opening', fail: 'failed', teardown: 'ending', abandon: 'abandoned' },
  opening: { opened: 'opened', fail: 'failed', teardown: 'ending', abandon: 'abandoned' },
  opened: { start: 'running', teardown: 'ending', abandon: 'abandoned' },
  running: { teardown: 'ending', abandon: 'abandoned' },
  failed: { teardown: 'ending', abandon: 'abandoned' },
  ending: { stopped: 'ended', abandon: 'abandoned' },
  ended: { abandon: 'abandoned' },
  // A teardown after the process died (one not begun before) runs as any other: its cancels reach
  // nobody, and the cancellation watchdog ends it.
  abandoned: { teardown: 'ending', abandon: 'abandoned' },
};

export function nextRemoteAttemptPhase(phase: RemoteAttemptPhase, event: RemoteAttemptEvent): RemoteAttemptPhase {
  return nextPhase(REMOTE_ATTEMPT_TRANSITIONS, 'remote attempt', phase, event);
}
