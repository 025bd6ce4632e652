import { afterEach, describe, expect, it } from 'vitest';
import { startWebJob, type RunningWebJob } from '../support/web-job.ts';
import { buildExecutionPlan } from '../../src/graph/execution-plan.ts';

describe('per-checkpoint traces in the job master', () => {
  let job: RunningWebJob | null = null;
  afterEach(async () => {
    await job?.client.cancel();
    job = null;
  });

  it('records the trigger, every subtask ack with its barrier arrivals per input channel, and the notifications', async () => {
    job = await startWebJob({ parallelism: 2 });
    job.gate.allowUpTo(100);
    await job.gate.reached(2);
    const done = await job.client.triggerCheckpoint();
    const trace = job.master.traces.get(done.checkpointId);
    expect(trace).not.toBeNull();
    const plan = buildExecutionPlan(job.master.config.graph);
    expect(trace!.subtasks.length).toBe(plan.subtasks.length);
    expect(trace!.options.alignment).toBe('aligned');
    expect(trace!.notifiedAtMs).not.toBeNull();
    for (const s of trace!.subtasks) {
      const inputs = plan.subtasks.find((p) => p.vertex === s.vertex && p.subtask === s.subtask)!.inputs;
      expect(s.metrics.barrierArrivalsMs.length).toBe(inputs.length);
      expect(s.metrics.syncStartMs).toBeGreaterThanOrEqual(trace!.triggeredAtMs);
      for (const at of s.metrics.barrierArrivalsMs) {
        expect(at).toBeGreaterThanOrEqual(trace!.triggeredAtMs);
        expect(at).toBeLessThanOrEqual(s.metrics.syncStartMs);
      }
      expect(s.ackAtMs).toBeGreaterThanOrEqual(s.metrics.syncStartMs);
      expect(trace!.notifiedAtMs!).toBeGreaterThanOrEqual(s.ackAtMs);
    }
    // the two-input operator has channels from both sources (2 x 2) and aligned on them
    const match = trace!.subtasks.filter((s) => s.metrics.barrierArrivalsMs.length === 4);
    expect(match.length).toBe(2);
  });

  it('keeps traces of retained checkpoints and the 5 newest others (bounded)', async () => {
    job = await startWebJob({ parallelism: 1 });
    const ids: number[] = [];
    for (let i = 1; i <= 10; i++) {
      job.gate.allowUpTo(i * 10);
      ids.push((await job.client.triggerCheckpoint()).checkpointId);
    }
    const kept = job.master.traces.all().map((t) => t.checkpointId);
    expect(kept).toEqual(ids.slice(-8)); // retained: 3, and 5 more
  });
});
