import { describe, expect, it } from 'vitest';
import { CollectSink, JobFailedError, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';
import { heldGenerate } from '../support/held-source.ts';

function spin(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end) {
    // a slow operator: its queue holds the barriers back
  }
}

/** A job whose barriers wait behind a long backlog at a slow operator, so checkpoints expire. */
function slowJob(restart: 'none' | 'fixed-delay', tolerableFailures: number) {
  const env = StreamEnvironment.create({
    parallelism: 1,
    checkpointing: { intervalMs: 10, timeoutMs: 30, tolerableFailures },
    restartStrategy: restart === 'none' ? { type: 'none' } : { type: 'fixed-delay', attempts: 1, delayMs: 10 },
    bufferRecords: 512,
    channelCapacity: 16,
  });
  const sink = new CollectSink<number>();
  // Paced by checkpoints (20,000 records between two): the input outlasts ten triggers however
  // loaded the machine, and each finds a backlog longer than the timeout.
  heldGenerate(env, { count: 200_000 }, (i) => i, { recordsPerCheckpoint: 20_000 })
    .uid('gen')
    .rebalance()
    .map((i) => {
      spin(5);
      return i;
    })
    .uid('slow')
    .sinkTo(sink);
  return { env, sink };
}

describe('checkpoint timeout and tolerableFailures', () => {
  it('aborts checkpoints that cannot finish in time, counts them, and fails the job past the limit', async () => {
    const { env } = slowJob('none', 2);
    const events: JobEvent[] = [];
    const error = await env.execute('slow', { onEvent: (e) => events.push(e) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as Error).message).toContain('tolerableFailures=2');
    expect((error as Error).message).toContain('did not complete within the timeout');
    const failed = events.filter((e) => e.type === 'checkpoint-failed');
    expect(failed.length).toBeGreaterThanOrEqual(3);
    for (const e of failed.slice(0, 3)) {
      if (e.type === 'checkpoint-failed') expect(e.stats.failureReason).toBe('EXPIRED');
    }
  });

  it('fails over (restarts) when the limit is passed and a restart is allowed', async () => {
    const { env } = slowJob('fixed-delay', 0);
    const events: JobEvent[] = [];
    const outcome = await env.execute('slow', { onEvent: (e) => events.push(e) }).catch((e: unknown) => e);
    const restarts = events.filter((e) => e.type === 'restarting');
    expect(restarts.length).toBeGreaterThanOrEqual(1);
    if (restarts[0]!.type === 'restarting') expect(restarts[0]!.cause).toContain('tolerableFailures=0');
    // After one restart the same backlog expires checkpoints again; the second time there are no attempts left.
    expect(outcome).toBeInstanceOf(JobFailedError);
  });
});
