/**
 * A task manager's changelog figures read on the job master's clock (onReceiverClock): the age of
 * the newest materialization survives any offset between the two clocks, an hour either way.
 */
import { describe, expect, it } from 'vitest';
import { type ChangelogFigures, onReceiverClock } from '../../../src/state/changelog/figures.ts';

const HOUR_MS = 3_600_000;

function figures(materializedAtMs: number | null): ChangelogFigures {
  return {
    pendingBytes: 10,
    inFlightBytes: 20,
    uploadedBytes: 300,
    uploads: 3,
    retries: 0,
    failures: 0,
    materializations: materializedAtMs === null ? 0 : 1,
    materializationFailures: 0,
    materializedAtMs,
    materializedBytes: 4_000,
    truncations: 1,
    restoresByReplay: 0,
  };
}

describe('changelog figures on the receiver clock', () => {
  for (const offsetMs of [HOUR_MS, -HOUR_MS, 0, 123.5]) {
    it(`a task manager clock ${offsetMs} ms from the job master's: the age is the one measured where the materialization ran`, () => {
      // The job master's clock, and the task manager's `offsetMs` from it (another host, another process's monotonic origin).
      let jobMasterMs = 50_000;
      const taskManagerMs = (): number => jobMasterMs + offsetMs;
      const materializedAtMs = taskManagerMs();
      jobMasterMs += 250; // the figures are read and sent 250 ms after the materialization
      const sentClockMs = taskManagerMs();
      const sent = figures(materializedAtMs);
      jobMasterMs += 3; // on the way
      const received = onReceiverClock(sent, sentClockMs, jobMasterMs)!;
      jobMasterMs += 100; // read by the REST route later
      const ageMs = jobMasterMs - received.materializedAtMs!;
      // Short by the message's way (3 ms) only: never ahead, never by the offset.
      expect(ageMs).toBe(350);
      // Nothing else moves.
      expect({ ...received, materializedAtMs: null }).toEqual({ ...sent, materializedAtMs: null });
      // Taken naively, the task manager's stamp on the job master's clock is off by the offset.
      expect(jobMasterMs - materializedAtMs).toBe(353 - offsetMs);
    });
  }

  it('no materialization yet, or no changelog backend: nothing to move', () => {
    const none = figures(null);
    expect(onReceiverClock(none, 10 + HOUR_MS, 10)).toBe(none);
    expect(onReceiverClock(null, 10 + HOUR_MS, 10)).toBeNull();
  });
});
