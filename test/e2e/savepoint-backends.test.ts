import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import type { JobClient } from '../../src/index.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { keyedCount, tempDir } from '../support/jobs.ts';

const N = 9_000;
const KEYS = 300;
const key = (i: number) => `k${(i * 7919) % KEYS}`;

/** Checkpoints on demand only; the gate holds the input so a stop finds the job running. */
function job(backend: 'heap' | 'embedded', parallelism: number, root: string, sink: CollectSink<string>, gate: SourceGate) {
  const env = StreamEnvironment.create({
    parallelism,
    stateBackend: backend,
    checkpointStorage: join(root, `chk-${backend}-${parallelism}`),
    checkpointing: { retention: 'retain-on-cancel' },
    restartStrategy: { type: 'none' },
  });
  heldGenerate(env, { count: N }, key, { gate })
    .uid('keys')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .sinkTo(sink)
    .uid('sink');
  return env;
}

async function checkpointed(client: JobClient): Promise<void> {
  await whenRunning(client);
  await client.triggerCheckpoint();
}

describe('savepoints move state between backends and parallelisms', () => {
  it('heap at 3 -> embedded at 5 -> heap at 2 keeps every key exactly', async () => {
    const root = tempDir();
    const external = new CollectSink<string>();
    const savepoints = join(root, 'savepoints');
    let from: string | undefined;
    const steps: Array<['heap' | 'embedded', number, boolean]> = [
      ['heap', 3, true],
      ['embedded', 5, true],
      ['heap', 2, false],
    ];
    let last = null;
    for (const [backend, p, stop] of steps) {
      // A stopped run is held at 600 records a subtask: it stops part-way, whatever the machine's load.
      const gate = new SourceGate(stop ? 600 : Infinity);
      const client = await job(backend, p, root, external, gate).executeAsync(`round-trip-${backend}-${p}`, { restoreFrom: from });
      if (stop) {
        await checkpointed(client);
        from = await client.stopWithSavepoint(savepoints);
        // The savepoint holds every key seen so far with its exact count.
        const meta = await readCheckpointMetadataAt(from);
        const state = await keyedStateAt(meta, 'count', 'n');
        const counted = [...state.values()].reduce((a: number, b) => a + (b as number), 0);
        expect(counted).toBeGreaterThan(0);
        expect(counted).toBeLessThan(N);
      }
      last = await client.result;
      expect(last.status).toBe('FINISHED');
    }
    const meta = await readCheckpointMetadataAt(last!.lastCheckpointLocation!);
    const state = await keyedStateAt(meta, 'count', 'n');
    expect(state.size).toBe(KEYS);
    for (let k = 0; k < KEYS; k++) expect(state.get(`k${k}`)).toBe(N / KEYS);
    // And the output across the three runs is exactly-once.
    const expected: string[] = [];
    const counts = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      const n = (counts.get(key(i)) ?? 0) + 1;
      counts.set(key(i), n);
      expected.push(`${key(i)}:${n}`);
    }
    expect(external.results().sort()).toEqual(expected.sort());
  });
});
