/**
 * A job master whose HA store refuses its checkpoint pointer (another leads) stops: the checkpoint
 * fails with LEADERSHIP_LOST, nothing is committed for it, and the job fails with
 * HA_LEADERSHIP_LOST without a restart (a restart would fail the same way and must not act as a
 * second leader).
 */
import { describe, expect, it } from 'vitest';
import { CollectSink, HaError, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';

describe('leadership lost while the job runs', () => {
  it('the first refused pointer fails the job for good; no checkpoint completes', async () => {
    const env = StreamEnvironment.create({
      parallelism: 1,
      checkpointing: { intervalMs: 20 },
      restartStrategy: { type: 'fixed-delay', attempts: 5, delayMs: 1 },
    });
    const sink = new CollectSink<number>();
    env
      .generate({ count: 100_000, ratePerSec: 20_000 }, (i) => i)
      .uid('n')
      .sinkTo(sink)
      .uid('out');
    const events: JobEvent[] = [];
    let asked = 0;
    const client = await env.executeAsync('deposed', {
      onEvent: (e) => events.push(e),
      leadership: {
        epoch: 3,
        publish: () => {
          asked++;
          return Promise.reject(new HaError('HA_LEADERSHIP_LOST', 'job master x lost the leadership of job deposed (epoch 3): another leads'));
        },
      },
    });
    const result = await client.result.then(
      () => null,
      (err: unknown) => err,
    );
    expect(result).toBeInstanceOf(Error);
    expect(String((result as Error).message)).toMatch(/lost the leadership/);
    expect(asked).toBe(1);
    expect(events.filter((e) => e.type === 'checkpoint-completed')).toEqual([]);
    expect(events.filter((e) => e.type === 'restarting')).toEqual([]);
    const failed = events.find((e) => e.type === 'checkpoint-failed');
    expect(failed?.type === 'checkpoint-failed' && failed.stats.failureReason).toBe('LEADERSHIP_LOST');
  });
});
