import { describe, expect, it } from 'vitest';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import { operatorStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { heldGenerate } from '../support/held-source.ts';
import { tempDir } from '../support/jobs.ts';
import { listCheckpointsIn } from '../../src/checkpoint/restore/snapshot-listing.ts';

function spin(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end) {
    // a slow operator
  }
}

/**
 * A two-input operator whose second input is slow. At each checkpoint's sync phase the operator
 * records how many records of each input it has processed; the sources' positions in the same
 * checkpoint say how many records each emitted before its barrier. Aligned: equal, always.
 */
async function runAlignmentJob(mode: 'exactly-once' | 'at-least-once') {
  const dir = tempDir();
  const env = StreamEnvironment.create({
    parallelism: 1,
    checkpointing: { intervalMs: 5, mode, retained: 1000, retention: 'retain-on-cancel' },
    checkpointStorage: dir,
    bufferRecords: 32,
    channelCapacity: 4,
  });
  const seenAtSnapshot = new Map<number, { a: number; b: number }>();
  // Paced by checkpoints, so both inputs last three or more of them however loaded the machine.
  const a = heldGenerate(env, { count: 30_000 }, (i) => i, { recordsPerCheckpoint: 7_000 }).uid('a');
  const b = heldGenerate(env, { count: 3_000 }, (i) => i, { recordsPerCheckpoint: 700 })
    .uid('b')
    .map((i) => {
      spin(30);
      return i;
    })
    .disableChaining();
  a.connect(b)
    .process(() => {
      let na = 0;
      let nb = 0;
      return {
        processElement1(_v: number) {
          na++;
        },
        processElement2(_v: number) {
          nb++;
        },
        snapshotState(checkpointId: number) {
          seenAtSnapshot.set(checkpointId, { a: na, b: nb });
        },
      };
    })
    .uid('co')
    .sinkTo(new CollectSink());
  const result = await env.execute('alignment');
  const listings = (await listCheckpointsIn(dir)).filter((l) => l.status === 'complete');
  const rows: Array<{ id: number; a: number; b: number; posA: number; posB: number }> = [];
  for (const l of listings) {
    const meta = await readCheckpointMetadataAt(l.location);
    const posA = (await operatorStateAt<{ next: number }>(meta, 'a', 'split-positions'))[0]![0]!.next;
    const posB = (await operatorStateAt<{ next: number }>(meta, 'b', 'split-positions'))[0]![0]!.next;
    rows.push({ id: meta.checkpointId, ...seenAtSnapshot.get(meta.checkpointId)!, posA, posB });
  }
  return { result, rows };
}

describe('barrier alignment', () => {
  it('snapshots exactly the records before barrier n on both inputs, with a slow second input', async () => {
    const { result, rows } = await runAlignmentJob('exactly-once');
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const r of rows) {
      expect({ id: r.id, a: r.a, b: r.b }).toEqual({ id: r.id, a: r.posA, b: r.posB });
    }
    // The scenario really aligned: the co-process kept reading the slow input while the fast one was held.
    expect(result.checkpoints.some((c) => c.subtasks.some((s) => s.metrics.alignmentRecords > 0))).toBe(true);
  });

  it('at-least-once does not hold back the fast input, so snapshots run ahead of it', async () => {
    const { rows } = await runAlignmentJob('at-least-once');
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const r of rows) expect(r.a).toBeGreaterThanOrEqual(r.posA);
    expect(rows.some((r) => r.a > r.posA)).toBe(true);
  });
});
