/**
 * The life cycles of issue 23 item 2, each a pure table: a job attempt in the job master, an
 * attempt on task managers, and the job's status. Every phase meets every event; the expected
 * outcomes are written out here, apart from the tables, so a changed table fails.
 */
import { describe, expect, it } from 'vitest';
import { AssertionError } from '../../src/core/assert.ts';
import { JOB_ATTEMPT_EVENTS, JOB_ATTEMPT_PHASES, JobAttempt, nextJobAttemptPhase } from '../../src/cluster/job-master/job-attempt.ts';
import { REMOTE_ATTEMPT_EVENTS, REMOTE_ATTEMPT_PHASES, nextRemoteAttemptPhase } from '../../src/cluster/job-master/remote-attempt-phase.ts';
import { JOB_STATUS_EVENTS, isTerminalStatus, nextJobStatus } from '../../src/cluster/job-master/job-status.ts';
import type { AttemptDeployment } from '../../src/cluster/job-master/attempt-deployment.ts';
import type { JobStatus } from '../../src/index.ts';
import { epochOf } from '../../src/cluster/transport/epoch.ts';

/** Every (phase, event) pair: the phase it leads to, or null where it is illegal (a programmer error). */
function outcomes<P extends string, E extends string>(phases: readonly P[], events: readonly E[], next: (p: P, e: E) => P): Record<string, P | null> {
  const out: Record<string, P | null> = {};
  for (const p of phases) {
    for (const e of events) {
      try {
        out[`${p} + ${e}`] = next(p, e);
      } catch (err) {
        expect(err).toBeInstanceOf(AssertionError);
        expect((err as Error).message).toContain(`'${e}' is illegal in phase '${p}'`);
        out[`${p} + ${e}`] = null;
      }
    }
  }
  return out;
}

/** The legal transitions as `from + event -> to` lines; every other pair must be illegal. */
function expectTable<P extends string, E extends string>(phases: readonly P[], events: readonly E[], next: (p: P, e: E) => P, legal: readonly string[]): void {
  const expected: Record<string, P | null> = {};
  for (const p of phases) for (const e of events) expected[`${p} + ${e}`] = null;
  for (const line of legal) {
    const [from, to] = line.split(' -> ') as [string, P];
    expect(from in expected, `'${from}' names a phase and an event of the table`).toBe(true);
    expected[from] = to;
  }
  expect(outcomes(phases, events, next)).toEqual(expected);
}

describe('job attempt phases (the job master)', () => {
  it('every phase x event: the legal transitions lead where the table says, every other pair is an assertion', () => {
    expect(JOB_ATTEMPT_PHASES).toHaveLength(7);
    expect(JOB_ATTEMPT_EVENTS).toHaveLength(6);
    expectTable(JOB_ATTEMPT_PHASES, JOB_ATTEMPT_EVENTS, nextJobAttemptPhase, [
      'scheduled + deploy -> deploying',
      'scheduled + end -> ending',
      'deploying + deployed -> deployed',
      'deploying + end -> ending',
      'deployed + open -> opening',
      'deployed + end -> ending',
      'opening + run -> running',
      'opening + end -> ending',
      'running + end -> ending',
      'ending + stopped -> ended',
    ]);
  });

  it('a JobAttempt holds its deployment from deployed on; ending lets it go unless the job finished; a second end is an assertion', () => {
    const tasks = [{ id: { vertex: 0, subtask: 0 } }] as unknown as AttemptDeployment['tasks'];
    const deployment = { tasks } as AttemptDeployment;
    const failed = new JobAttempt(epochOf(0, 3));
    expect([failed.phase, failed.live, failed.endable, failed.tasks]).toEqual(['scheduled', false, true, []]);
    failed.deploy(900);
    failed.deployed(deployment, null);
    expect([failed.phase, failed.live, failed.deployment]).toEqual(['deployed', true, deployment]);
    expect(failed.open()).toBe(deployment);
    failed.run(1_000);
    expect([failed.phase, failed.live, failed.restoredAtMs, failed.restoreDurationMs]).toEqual(['running', true, null, null]);
    expect(failed.end(false)).toBe(deployment);
    expect([failed.phase, failed.live, failed.endable, failed.deployment, failed.tasks]).toEqual(['ending', false, false, null, []]);
    expect(() => failed.end(false)).toThrow(AssertionError);
    failed.stopped();
    expect(failed.phase).toBe('ended');

    const finished = new JobAttempt(epochOf(0, 4));
    finished.deploy(1_250);
    finished.deployed(deployment, { checkpointId: 7 } as never);
    finished.open();
    finished.run(2_000);
    expect(finished.restoredAtMs).toBe(2_000);
    expect(finished.restoreDurationMs).toBe(750);
    expect(finished.end(true)).toBe(deployment);
    // The job finished: its figures stay readable.
    expect(finished.tasks).toBe(tasks);
  });

  it('an attempt ended while it waited for its restart delay never deploys', () => {
    const a = new JobAttempt(epochOf(0, 1));
    expect(a.end(false)).toBeNull();
    expect(() => a.deploy(0)).toThrow(/'deploy' is illegal in phase 'ending'/);
  });
});

describe('remote attempt phases (task managers, the job master side)', () => {
  it('every phase x event: the legal transitions lead where the table says, every other pair is an assertion', () => {
    expect(REMOTE_ATTEMPT_PHASES).toHaveLength(9);
    expect(REMOTE_ATTEMPT_EVENTS).toHaveLength(8);
    expectTable(REMOTE_ATTEMPT_PHASES, REMOTE_ATTEMPT_EVENTS, nextRemoteAttemptPhase, [
      'deploying + deployed -> deployed',
      'deploying + fail -> failed',
      'deployed + open -> opening',
      'deployed + fail -> failed',
      'deployed + teardown -> ending',
      'deployed + abandon -> abandoned',
      'opening + opened -> opened',
      'opening + fail -> failed',
      'opening + teardown -> ending',
      'opening + abandon -> abandoned',
      'opened + start -> running',
      'opened + teardown -> ending',
      'opened + abandon -> abandoned',
      'running + teardown -> ending',
      'running + abandon -> abandoned',
      'failed + teardown -> ending',
      'failed + abandon -> abandoned',
      'ending + stopped -> ended',
      'ending + abandon -> abandoned',
      'ended + abandon -> abandoned',
      'abandoned + teardown -> ending',
      'abandoned + abandon -> abandoned',
    ]);
  });
});

describe('job status', () => {
  const STATUSES: readonly JobStatus[] = ['CREATED', 'RUNNING', 'RESTARTING', 'FINISHED', 'FAILED', 'CANCELED'];

  it('every status x event: the legal transitions lead where the table says; nothing leaves a terminal status', () => {
    expectTable(STATUSES, JOB_STATUS_EVENTS, nextJobStatus, [
      'CREATED + run -> RUNNING',
      'CREATED + restart -> RESTARTING',
      'CREATED + cancel -> CANCELED',
      'RUNNING + restart -> RESTARTING',
      'RUNNING + finish -> FINISHED',
      'RUNNING + cancel -> CANCELED',
      'RESTARTING + run -> RUNNING',
      'RESTARTING + restart -> RESTARTING',
      'RESTARTING + fail -> FAILED',
      'RESTARTING + cancel -> CANCELED',
    ]);
    expect(STATUSES.filter(isTerminalStatus)).toEqual(['FINISHED', 'FAILED', 'CANCELED']);
  });
});
