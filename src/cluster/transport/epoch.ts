/**
 * The epoch of a job attempt: the job master's leader epoch and the attempt number. It travels in
 * every control message between the job master and its task managers, so either side can tell a
 * message of the attempt it runs from a late one of an attempt already torn down, or of a job
 * master that is no longer the leader, and drop it. Plain data: it crosses every transport.
 */
import { assert } from '../../core/assert.ts';

/** Which job master (leader epoch) and which of its attempts a control message belongs to. */
export interface Epoch {
  /** The job master's leader epoch: a job master that took over from another has a higher one. */
  readonly leader: number;
  /** The attempt of the job under that leader: 0, then one more per restart. */
  readonly attempt: number;
}

/** The epoch of `attempt` under leader epoch `leader`; both are non-negative integers. */
export function epochOf(leader: number, attempt: number): Epoch {
  assert(Number.isInteger(leader) && leader >= 0, () => `leader epoch must be an integer >= 0, got ${leader}`);
  assert(Number.isInteger(attempt) && attempt >= 0, () => `attempt must be an integer >= 0, got ${attempt}`);
  return { leader, attempt };
}

/** Negative when `a` is older than `b`, 0 when equal, positive when newer: the leader first, then the attempt. */
export function compareEpochs(a: Epoch, b: Epoch): number {
  return a.leader - b.leader || a.attempt - b.attempt;
}

export function sameEpoch(a: Epoch, b: Epoch): boolean {
  return a.leader === b.leader && a.attempt === b.attempt;
}

/** `leader 0 attempt 3`: how logs and errors name an epoch. */
export function formatEpoch(e: Epoch): string {
  return `leader ${e.leader} attempt ${e.attempt}`;
}

/**
 * Whether a task manager whose current epoch is `current` (null: never deployed) takes a control
 * message: a `deploy` of its epoch or a newer one (a new attempt begins, or the same attempt is
 * deployed again from an older checkpoint), anything else only of its current epoch.
 */
export function admitsControl(current: Epoch | null, message: { readonly type: string; readonly epoch: Epoch }): boolean {
  if (message.type === 'deploy') return current === null || compareEpochs(message.epoch, current) >= 0;
  return current !== null && sameEpoch(message.epoch, current);
}
