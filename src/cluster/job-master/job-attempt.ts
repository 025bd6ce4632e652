/**
 * One attempt of a job as the job master runs it: its epoch, its phase and what it holds. The job
 * master makes a new one per attempt (nothing is reset by hand) and keeps only the current one; a
 * message of another attempt is recognised by its epoch. Phases move by one table.
 */
import type { CompletedCheckpoint } from '../../checkpoint/coordinator/completed-checkpoint.ts';
import type { AttemptDeployment, TaskHandle } from './attempt-deployment.ts';
import type { Epoch } from '../transport/epoch.ts';
import { nextPhase, type TransitionTable } from '../../core/transition-table.ts';

/**
 * `scheduled`: waits for its restart delay; `deploying`: restores and deploys (and reconciles the
 * sinks); `deployed`: holds its deployment; `opening`: its subtasks open their operators;
 * `running`; `ending`: torn down, its subtasks stopping; `ended`: every subtask stopped.
 */
export type JobAttemptPhase = 'scheduled' | 'deploying' | 'deployed' | 'opening' | 'running' | 'ending' | 'ended';

/** `end`: it failed, or the job finished, failed or was cancelled; `stopped`: every subtask of it stopped. */
export type JobAttemptEvent = 'deploy' | 'deployed' | 'open' | 'run' | 'end' | 'stopped';

export const JOB_ATTEMPT_PHASES: readonly JobAttemptPhase[] = ['scheduled', 'deploying', 'deployed', 'opening', 'running', 'ending', 'ended'];
export const JOB_ATTEMPT_EVENTS: readonly JobAttemptEvent[] = ['deploy', 'deployed', 'open', 'run', 'end', 'stopped'];

export const JOB_ATTEMPT_TRANSITIONS: TransitionTable<JobAttemptPhase, JobAttemptEvent> = {
  scheduled: { deploy: 'deploying', end: 'ending' },
  deploying: { deployed: 'deployed', end: 'ending' },
  deployed: { open: 'opening', end: 'ending' },
  opening: { run: 'running', end: 'ending' },
  running: { end: 'ending' },
  ending: { stopped: 'ended' },
  ended: {},
};

export function nextJobAttemptPhase(phase: JobAttemptPhase, event: JobAttemptEvent): JobAttemptPhase {
  return nextPhase(JOB_ATTEMPT_TRANSITIONS, 'job attempt', phase, event);
}

/** An attempt of the job in the job master: from its schedule to the moment every subtask of it stopped. */
export class JobAttempt {
  private now: JobAttemptPhase = 'scheduled';
  private held: AttemptDeployment | null = null;
  private restored: CompletedCheckpoint | null = null;
  /** Wall-clock ms it started running from a restored checkpoint; null otherwise. */
  private restoredAt: number | null = null;
  /** Wall-clock ms it began to deploy (restore included); null before. */
  private deployingAt: number | null = null;
  /** Wall-clock ms it started running; null before. */
  private runningAt: number | null = null;
  /** Subtasks that reached the end of their input, and that finished (by `taskKey`). */
  readonly endedData = new Set<string>();
  readonly finished = new Set<string>();

  constructor(readonly epoch: Epoch) {}

  get phase(): JobAttemptPhase {
    return this.now;
  }

  /** Whether it is in `phase` now (a method, so that a check after an await is not narrowed away by one before). */
  isIn(phase: JobAttemptPhase): boolean {
    return this.now === phase;
  }

  /** Deployed, opening or running: its subtasks' messages are heard. */
  get live(): boolean {
    return this.now === 'deployed' || this.now === 'opening' || this.now === 'running';
  }

  /** Not yet ending: a failure ends it (one failure per attempt: later ones are its echoes). */
  get endable(): boolean {
    return this.now !== 'ending' && this.now !== 'ended';
  }

  /** The deployment it holds: from `deployed` until torn down; after the job finished it stays, for its figures. */
  get deployment(): AttemptDeployment | null {
    return this.held;
  }

  get tasks(): readonly TaskHandle[] {
    return this.held?.tasks ?? [];
  }

  /** The checkpoint it restored from, once deployed; null when it started empty. */
  get restoredFrom(): CompletedCheckpoint | null {
    return this.restored;
  }

  get restoredAtMs(): number | null {
    return this.restoredAt;
  }

  /** Wall-clock ms from the start of its deployment to running, when it restored a checkpoint (the restore time of a recovery); null otherwise. */
  get restoreDurationMs(): number | null {
    return this.restoredAt === null || this.deployingAt === null ? null : this.restoredAt - this.deployingAt;
  }

  /** Wall-clock ms it started running; null before. */
  get runningAtMs(): number | null {
    return this.runningAt;
  }

  /** It begins to deploy (and restore) at `wallNowMs`. */
  deploy(wallNowMs: number): void {
    this.move('deploy');
    this.deployingAt = wallNowMs;
  }

  deployed(deployment: AttemptDeployment, restoredFrom: CompletedCheckpoint | null): void {
    this.move('deployed');
    this.held = deployment;
    this.restored = restoredFrom;
  }

  open(): AttemptDeployment {
    this.move('open');
    return this.held!;
  }

  /** Every subtask opened and was started; `wallNowMs` is when (kept if it restored a checkpoint). */
  run(wallNowMs: number): void {
    this.move('run');
    this.runningAt = wallNowMs;
    if (this.restored !== null) this.restoredAt = wallNowMs;
  }

  /**
   * Ends it and hands back the deployment to tear down, if it holds one. `keep`: the deployment
   * stays readable for its figures (the job finished); otherwise it is let go.
   */
  end(keep: boolean): AttemptDeployment | null {
    this.move('end');
    const deployment = this.held;
    if (!keep) this.held = null;
    return deployment;
  }

  stopped(): void {
    this.move('stopped');
  }

  private move(event: JobAttemptEvent): void {
    this.now = nextJobAttemptPhase(this.now, event);
  }
}
