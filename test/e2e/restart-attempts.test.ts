import { describe, expect, it } from 'vitest';
import { CollectSink, JobFailedError, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';

describe('restart attempts', () => {
  it('a failure while a restart attempt starts counts as that attempt failing, until attempts run out', async () => {
    const env = StreamEnvironment.create({ restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 1 } });
    env
      .generate({ count: 10 }, (i) => i)
      .keyBy((i) => i % 2)
      .process(() => ({
        open() {
          throw new Error('open fails');
        },
        processElement() {},
      }))
      .uid('p')
      .sinkTo(new CollectSink());
    const events: JobEvent[] = [];
    const error = await env.execute('open-fails', { onEvent: (e) => events.push(e) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as Error).message).toContain('allows 3 restarts and all were used');
    expect((error as Error).message).toContain('open fails');
    expect(events.filter((e) => e.type === 'restarting').length).toBe(3);
  });
});
