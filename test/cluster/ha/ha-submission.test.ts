import { describe, expect, it } from 'vitest';
import { HaError } from '../../../src/core/errors.ts';
import { moduleChangeNote, submissionMismatch } from '../../../src/cluster/ha/ha-submission.ts';

const graph = {
  vertices: [
    { name: 'source -> map', parallelism: 2, uids: ['source', 'map'] },
    { name: 'count -> sink', parallelism: 2, uids: ['count', 'sink'] },
  ],
};
const recorded = { graph, moduleHash: 'ab'.repeat(32), epoch: 3 };

describe('the job submission an HA store records', () => {
  it('nothing recorded, or the same graph: no refusal, whatever the module hash', () => {
    expect(submissionMismatch('orders', 'pg', { graph, moduleHash: null }, null)).toBeNull();
    expect(submissionMismatch('orders', 'pg', { graph, moduleHash: 'cd'.repeat(32) }, recorded)).toBeNull();
  });

  it('another graph is refused, naming the job, the recording epoch, both modules and the first difference', () => {
    const other = { vertices: [graph.vertices[0]!, { name: 'count -> sink', parallelism: 3, uids: ['count', 'sink'] }] };
    const e = submissionMismatch('orders', 'postgres://root@db/test', { graph: other, moduleHash: 'cd'.repeat(32) }, recorded);
    expect(e).toBeInstanceOf(HaError);
    expect(e!.code).toBe('HA_JOB_MISMATCH');
    expect(e!.message).toContain("job 'orders' in the HA store postgres://root@db/test runs another job graph than this process built");
    expect(e!.message).toContain('recorded by epoch 3, module abababababab; this process: module cdcdcdcdcdcd');
    expect(e!.message).toContain("vertex 1 ('count -> sink') has parallelism 3, the job in the HA store's 2");
    const renamed = { vertices: [{ name: 'source -> map', parallelism: 2, uids: ['source', 'mapper'] }, graph.vertices[1]!] };
    expect(submissionMismatch('orders', 'pg', { graph: renamed, moduleHash: null }, recorded)!.message).toContain(
      "uid 'map' (vertex 0, 'source -> map') is missing; that vertex has uids 'source', 'mapper'",
    );
  });

  it('a changed module with the same graph is a note, not a refusal', () => {
    expect(moduleChangeNote('orders', { graph, moduleHash: recorded.moduleHash }, recorded)).toBeNull();
    expect(moduleChangeNote('orders', { graph, moduleHash: 'cd'.repeat(32) }, recorded)).toBe(
      "job 'orders': the job module differs from the one epoch 3 ran (module abababababab, now module cdcdcdcdcdcd); it builds the same job graph, so it takes over",
    );
  });
});
