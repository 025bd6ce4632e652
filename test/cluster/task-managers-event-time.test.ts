import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCommittedLines, StreamEnvironment, type JobEvent } from '../../src/index.ts';
import { expectedBucketSums } from '../support/event-time-job.ts';
import { tempDir } from '../support/jobs.ts';
import build from './fixtures/tm-event-time-job.ts';

const MODULE = join(import.meta.dirname, 'fixtures', 'tm-event-time-job.ts');
const VARS = ['ET_COUNT', 'ET_KEYS', 'ET_OUT', 'ET_FAULT', 'ET_FAULT_AT', 'ET_FAULT_MARKER'];
const COUNT = 12_000;
const KEYS = 30;

afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

describe('event time across worker-thread task managers', () => {
  // Sources on both task managers, the timer operator at parallelism 3 spread over both: events and
  // watermarks cross serialized channels in both directions, and the timers restore in another attempt.
  it.each([
    ['thrown in the timer operator', 'throw', /injected failure at event \d+/],
    ['that ends the worker thread of the timer operator', 'exit', /task manager \d died: its worker thread exited with code 7/],
  ])(
    'watermarks and event-time timers give the reference result on two task managers through a fault %s',
    async (_name, fault, cause) => {
      const out = tempDir('weir-tm-et-out-');
      const marker = join(tempDir('weir-tm-et-marker-'), 'fault');
      const vars = { ET_COUNT: COUNT, ET_KEYS: KEYS, ET_OUT: out, ET_FAULT: fault, ET_FAULT_AT: COUNT / 2, ET_FAULT_MARKER: marker };
      for (const [k, v] of Object.entries(vars)) process.env[k] = String(v);
      const env = StreamEnvironment.create({
        parallelism: 3,
        taskManagers: 2,
        autoWatermarkIntervalMs: 2,
        checkpointStorage: tempDir('weir-tm-et-chk-'),
        checkpointing: { intervalMs: 20 },
        restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 20 },
        bufferRecords: 64,
        channelCapacity: 4,
        // A failover that waited for the cancellation watchdog would run into the test's timeout.
        cancellationTimeoutMs: 120_000,
      });
      build(env);
      env.setJobModule(MODULE);
      const events: JobEvent[] = [];
      const result = await env.execute('tm-event-time', { onEvent: (e) => events.push(e) });
      expect(result.status).toBe('FINISHED');
      expect(existsSync(marker)).toBe(true);
      expect(result.restarts).toBe(1);
      const restarting = events.find((e) => e.type === 'restarting');
      expect(restarting?.type === 'restarting' && restarting.cause).toMatch(cause);
      // The second attempt restored a checkpoint: the timers and bucket sums came back from state.
      expect(events.filter((e) => e.type === 'running').map((e) => e.type === 'running' && e.restoredFrom! > 0)).toEqual([false, true]);
      const lines = readdirSync(out).length === 0 ? [] : [...readCommittedLines(out)].sort();
      expect(lines).toEqual(expectedBucketSums(COUNT, KEYS));
    },
    120_000,
  );
});
