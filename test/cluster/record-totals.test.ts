import { describe, expect, it } from 'vitest';
import type { TaskHandle } from '../../src/cluster/job-master/attempt-deployment.ts';
import { RecordTotals } from '../../src/cluster/job-master/record-totals.ts';

/** A subtask's figures as the job master reads them (only the counters matter here). */
function task(vertex: number, subtask: number, n: number): TaskHandle & { n: number } {
  const t = { id: { vertex, subtask }, sourceRecordsOut: n, sinkRecordsIn: n, recordsIn: n, recordsWritten: n, n };
  return t as unknown as TaskHandle & { n: number };
}

describe('RecordTotals', () => {
  it('adds the counts of torn-down attempts to the running one; a total never goes down while an attempt stops', async () => {
    const totals = new RecordTotals();
    const first = [task(0, 0, 10), task(0, 1, 20)];
    let stopped!: () => void;
    totals.retire(first, new Promise<void>((r) => (stopped = r)));
    // Still stopping: read live (it counted 5 more before it stopped).
    (first[0] as unknown as { sourceRecordsOut: number }).sourceRecordsOut = 15;
    const second = [task(0, 0, 3), task(0, 1, 4)];
    expect(totals.of({ vertex: 0, subtask: 0 }, second[0]).sourceRecordsOut).toBe(18);
    expect(totals.job(second).sourceRecordsOut).toBe(15 + 20 + 3 + 4);
    stopped();
    await Promise.resolve();
    await Promise.resolve();
    // Folded at its final counts; a later change of the old handle no longer counts.
    (first[0] as unknown as { sourceRecordsOut: number }).sourceRecordsOut = 99;
    expect(totals.of({ vertex: 0, subtask: 0 }, second[0]).sourceRecordsOut).toBe(18);
    expect(totals.of({ vertex: 0, subtask: 1 }, undefined).recordsWritten).toBe(20);
    expect(totals.job([]).sinkRecordsIn).toBe(10 + 20);
  });
});
