/**
 * What a changelog backend reports of its log and materializations (REST, `/metrics`, the
 * dashboard), and how the figures of several backends (the keyed operators of one chain, or one
 * subtask's attempts) add up: counters sum; the bytes pending and in flight are the live backends';
 * the newest materialization is the latest of them, its size the sum of the newest ones.
 */
import type { UploadFigures } from './uploader.ts';

/** Per-subtask figures of the changelog backend. */
export interface ChangelogFigures extends UploadFigures {
  /** Bytes of changes in the buffer, not yet sealed into a batch. */
  pendingBytes: number;
  materializations: number;
  materializationFailures: number;
  /**
   * Clock.now() (ms) of the newest finished materialization (null: none yet), on the clock of
   * whoever holds the figures: the task manager's where they are read, the job master's once it
   * received them (`onReceiverClock`). Only its distance to that clock's now means anything.
   */
  materializedAtMs: number | null;
  /** State bytes of the newest materialization. */
  materializedBytes: number;
  truncations: number;
  restoresByReplay: number;
}

/** The figures that only grow over a backend's life (the ones to total over a subtask's attempts). */
export const CHANGELOG_COUNTERS = [
  'uploadedBytes',
  'uploads',
  'retries',
  'failures',
  'materializations',
  'materializationFailures',
  'truncations',
  'restoresByReplay',
] as const;

/** `a` and `b` together (null: no changelog backend). */
export function addChangelogFigures(a: ChangelogFigures | null, b: ChangelogFigures | null): ChangelogFigures | null {
  if (a === null) return b;
  if (b === null) return a;
  const at =
    a.materializedAtMs === null ? b.materializedAtMs : b.materializedAtMs === null ? a.materializedAtMs : Math.max(a.materializedAtMs, b.materializedAtMs);
  return {
    pendingBytes: a.pendingBytes + b.pendingBytes,
    inFlightBytes: a.inFlightBytes + b.inFlightBytes,
    uploadedBytes: a.uploadedBytes + b.uploadedBytes,
    uploads: a.uploads + b.uploads,
    retries: a.retries + b.retries,
    failures: a.failures + b.failures,
    materializations: a.materializations + b.materializations,
    materializationFailures: a.materializationFailures + b.materializationFailures,
    materializedAtMs: at,
    materializedBytes: a.materializedBytes + b.materializedBytes,
    truncations: a.truncations + b.truncations,
    restoresByReplay: a.restoresByReplay + b.restoresByReplay,
  };
}

/** `later` (a subtask's next attempt) after `earlier`: counters sum, the rest is the later one's (its materialization, or the earlier's when it made none). */
export function afterAttempt(earlier: ChangelogFigures | null, later: ChangelogFigures | null): ChangelogFigures | null {
  if (earlier === null || later === null) return later ?? earlier;
  const out: ChangelogFigures = { ...later };
  for (const k of CHANGELOG_COUNTERS) out[k] += earlier[k];
  if (out.materializedAtMs === null) {
    out.materializedAtMs = earlier.materializedAtMs;
    out.materializedBytes = earlier.materializedBytes;
  }
  return out;
}

/** A subtask's figures over its attempts: `ended` (its torn-down attempts, folded) then `live` (the running one, or null: none runs, so nothing is pending or in flight). */
export function overAttempts(ended: ChangelogFigures | null, live: ChangelogFigures | null): ChangelogFigures | null {
  if (live === null && ended !== null) return { ...ended, pendingBytes: 0, inFlightBytes: 0 };
  return afterAttempt(ended, live);
}

/**
 * The figures a task manager read at `sentClockMs` of its clock, on the clock of the job master that
 * received them at `receivedClockMs` of its own: the stamps keep their age at sending. Two hosts'
 * clocks (or two processes' monotonic clocks) differ by any offset; an age is the same on both, so
 * the answer is right whatever the offset, short by the message's way only (never ahead of it).
 */
export function onReceiverClock(f: ChangelogFigures | null, sentClockMs: number, receivedClockMs: number): ChangelogFigures | null {
  if (f === null || f.materializedAtMs === null) return f;
  return { ...f, materializedAtMs: receivedClockMs - (sentClockMs - f.materializedAtMs) };
}
