import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import { readCheckpointMetadataAt } from '../support/read-state.ts';
import { keyedStateAt } from '../support/read-state.ts';
import { whenRunning } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { sortedCopy, tempDir } from '../support/jobs.ts';
import { inspectSnapshot } from '../../src/cli/savepoint-inspect.ts';
import { BUCKETS_UID, buildEventTimeJob, expectedBucketSums } from '../support/event-time-job.ts';

const COUNT = 12_000;
const KEYS = 30;

describe('event-time timers across savepoints and rescaling', () => {
  it.each(['heap', 'embedded'] as const)(
    '%s: timers pending in a savepoint fire after restoring the timer operator at 2, then 3, then 1 subtasks; the output is exactly-once',
    async (stateBackend) => {
      const root = tempDir();
      const external = new CollectSink<string>();
      const pending: number[] = [];
      let from: string | undefined;
      // Source subtasks (2, fixed) emit 1,500 records each in the first two runs; the last runs to the end.
      for (const [p, limit] of [
        [2, 1_500],
        [3, 1_500],
        [1, Infinity],
      ] as const) {
        const gate = new SourceGate(limit);
        const env = StreamEnvironment.create({
          parallelism: p,
          autoWatermarkIntervalMs: 2,
          stateBackend,
          checkpointStorage: join(root, 'chk'),
          checkpointing: { retention: 'retain-on-cancel' },
          restartStrategy: { type: 'none' },
        });
        buildEventTimeJob(env, external, { count: COUNT, keys: KEYS, sourceParallelism: 2, hold: { gate } });
        const client = await env.executeAsync('rescale-timers', { restoreFrom: from });
        if (limit !== Infinity) {
          await whenRunning(client);
          await gate.reached(2);
          from = await client.stopWithSavepoint(join(root, 'savepoints'));
          const timers = await keyedStateAt(await readCheckpointMetadataAt(from), BUCKETS_UID, '_timers/user');
          let n = 0;
          for (const v of timers.values()) n += (v as Map<string, unknown>).size;
          pending.push(n);
          // `weir savepoint inspect` shows the timers as keyed map state of the operator.
          const report = await inspectSnapshot(from);
          const timerState = report.operators.find((o) => o.uid === BUCKETS_UID)?.states.find((st) => st.name === '_timers/user');
          expect(timerState).toMatchObject({ scope: 'keyed', kind: 'map', keys: timers.size });
        }
        expect((await client.result).status).toBe('FINISHED');
      }
      // Each savepoint held timers that had not fired (the current bucket of keys, at least).
      expect(pending.length).toBe(2);
      for (const n of pending) expect(n).toBeGreaterThan(0);
      expect(sortedCopy(external.results())).toEqual(expectedBucketSums(COUNT, KEYS));
    },
  );
});
