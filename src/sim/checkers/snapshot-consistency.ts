/**
 * Checker (c): in every completed checkpoint, the keyed state agrees with the source positions in
 * the same checkpoint: per key, the last sequence equals the records the source emitted before its
 * barrier (at-least-once: at least that many).
 */
import type { CheckpointMetadata } from '../../checkpoint/metadata/metadata.ts';
import { ListStateDescriptor } from '../../state/descriptors.ts';
import { HeapKeyedStateBackend } from '../../state/heap/heap-keyed-backend.ts';
import { HeapOperatorStateBackend } from '../../state/heap/heap-operator-backend.ts';
import type { StateReader } from '../../state/backend.ts';
import { countsAtPositions } from '../sequence-source.ts';
import type { BuiltScenario } from '../scenarios.ts';

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

export async function checkSnapshot(meta: CheckpointMetadata, scenario: BuiltScenario, mode: 'exactly-once' | 'at-least-once', read: StateReader): Promise<string[]> {
  if (!scenario.keyed) return [];
  const keyed = scenario.keyed;
  const keyedOp = meta.operators.find((o) => o.uid === keyed.uid);
  if (!keyedOp) return [`checkpoint ${meta.checkpointId} has no state for ${keyed.uid}`];
  const backend = new HeapKeyedStateBackend({ uid: keyedOp.uid, subtask: 0, keyGroupRange: { start: 0, end: keyedOp.maxParallelism - 1 }, maxParallelism: keyedOp.maxParallelism });
  await backend.restore(keyedOp.subtasks.flatMap((s) => s.keyed), read);
  const problems: string[] = [];
  for (const { uid, spec } of scenario.sources) {
    const expected = countsAtPositions(spec, await sourcePositions(meta, uid, read));
    const stateName = keyed.stateBySource[uid]!;
    const actual = new Map<string, number>();
    for (const [k, v] of backend.keyCounts()[stateName] !== undefined ? backend.entries(stateName) : []) {
      if (String(k).startsWith(spec.src)) actual.set(String(k), v as number);
    }
    for (const key of new Set([...expected.keys(), ...actual.keys()])) {
      const e = expected.get(key) ?? 0;
      const a = actual.get(key) ?? 0;
      const bad = mode === 'exactly-once' ? a !== e : a < e;
      if (bad && problems.length < 10) problems.push(`checkpoint ${meta.checkpointId}: key ${key} (${uid}) has last sequence ${a} in state but the source position says ${e}`);
    }
  }
  backend.dispose();
  return problems;
}
