/**
 * Checker (c): in every completed checkpoint, the keyed state agrees with the source positions in
 * the same checkpoint: per key, the last sequence equals the records the source emitted before its
 * barrier (at-least-once: at least that many). For unaligned checkpoints the in-flight data counts
 * too: the key's in-flight records must be exactly the sequences after the state's last one, up to
 * the source position.
 */
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import { HeapKeyedStateBackend } from '../../state/heap/heap-keyed-backend.ts';
import { HeapOperatorStateBackend } from '../../state/heap/heap-operator-backend.ts';
import type { StateReader } from '../../state/backend.ts';
import { countsAtPositions, type SeqRecord } from '../scenarios/sequence-source.ts';
import { decodeBuffers } from '../../checkpoint/channel/channel-state.ts';
import type { BuiltScenario } from '../scenarios/scenarios.ts';

/** Sequences of in-flight records per origin and key, from the channel state of every subtask. */
async function inflightSequences(meta: CheckpointMetadata, read: StateReader): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const op of meta.operators) {
    for (const s of op.subtasks) {
      for (const h of s.channels) {
        for (const b of decodeBuffers(await read(h.stream), `channel state of ${op.uid}`)) {
          if (b.kind !== 'buffer') continue;
          for (const r of b.records as SeqRecord[]) {
            const k = `${r.origin}|${r.key}`;
            const list = out.get(k);
            if (list) list.push(r.seq);
            else out.set(k, [r.seq]);
          }
        }
      }
    }
  }
  return out;
}

async function sourcePositions(meta: CheckpointMetadata, uid: string, read: StateReader): Promise<Array<{ split: number; next: number }>> {
  const op = meta.operators.find((o) => o.uid === uid);
  if (!op) return [];
  const out: Array<{ split: number; next: number }> = [];
  for (const s of op.subtasks) {
    const backend = new HeapOperatorStateBackend({ uid, subtask: s.subtask });
    await backend.restore(s.operator ? [s.operator] : [], read);
    out.push(...backend.getListState(new ListStateDescriptor<{ split: number; next: number }>('split-positions')).get());
  }
  return out;
}

export async function checkSnapshot(
  meta: CheckpointMetadata,
  scenario: BuiltScenario,
  mode: 'exactly-once' | 'at-least-once',
  read: StateReader,
): Promise<string[]> {
  if (!scenario.keyed) return [];
  const keyed = scenario.keyed;
  const keyedOp = meta.operators.find((o) => o.uid === keyed.uid);
  if (!keyedOp) return [`checkpoint ${meta.checkpointId} has no state for ${keyed.uid}`];
  const backend = new HeapKeyedStateBackend({
    uid: keyedOp.uid,
    subtask: 0,
    keyGroupRange: { start: 0, end: keyedOp.maxParallelism - 1 },
    maxParallelism: keyedOp.maxParallelism,
  });
  await backend.restore(
    keyedOp.subtasks.flatMap((s) => s.keyed),
    read,
  );
  const inflight = await inflightSequences(meta, read);
  const problems: string[] = [];
  for (const { uid, spec } of scenario.sources) {
    const origin = spec.origin ?? spec.src;
    const expected = countsAtPositions(spec, await sourcePositions(meta, uid, read));
    const stateName = keyed.stateBySource[uid]!;
    const actual = new Map<string, number>();
    for (const [k, v] of backend.keyCounts()[stateName] !== undefined ? backend.entries(stateName) : []) {
      if (String(k).startsWith(spec.src)) actual.set(String(k), v as number);
    }
    for (const key of new Set([...expected.keys(), ...actual.keys()])) {
      const e = expected.get(key) ?? 0;
      const a = actual.get(key) ?? 0;
      const flying = (inflight.get(`${origin}|${key}`) ?? []).sort((x, y) => x - y);
      const contiguous = flying.every((seq, i) => seq === a + 1 + i);
      const bad = mode === 'exactly-once' ? !contiguous || a + flying.length !== e : a < e;
      if (bad && problems.length < 10) {
        problems.push(
          `checkpoint ${meta.checkpointId}: key ${key} (${uid}) has last sequence ${a} in state and in-flight [${flying.join(',')}] but the source position says ${e}`,
        );
      }
    }
  }
  backend.dispose();
  return problems;
}
