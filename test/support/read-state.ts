import { readCheckpointMetadataAt } from '../../src/checkpoint/restore/locate.ts';
import type { CheckpointMetadata } from '../../src/checkpoint/metadata/metadata.ts';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-backend.ts';
import { HeapOperatorStateBackend } from '../../src/state/heap/heap-operator-backend.ts';
import { FsCheckpointStorage } from '../../src/storage/fs-storage.ts';
import { jobId } from '../../src/core/ids.ts';
import type { Key } from '../../src/state/key-groups.ts';
import { ListStateDescriptor } from '../../src/state/descriptors.ts';

const reader = new FsCheckpointStorage('/tmp/weir-test-reader', jobId('reader'));
const read = (h: Parameters<FsCheckpointStorage['readState']>[0]) => reader.readState(h);

/** Every (key, value) of a keyed state of `uid` in a checkpoint, over all key groups (read from the file system unless `readState` says otherwise). */
export async function keyedStateAt(metadata: CheckpointMetadata, uid: string, stateName: string, readState = read): Promise<Map<Key, unknown>> {
  const op = metadata.operators.find((o) => o.uid === uid);
  if (!op) throw new Error(`no uid ${uid} in checkpoint ${metadata.checkpointId}`);
  const backend = new HeapKeyedStateBackend({ uid, subtask: 0, keyGroupRange: { start: 0, end: op.maxParallelism - 1 }, maxParallelism: op.maxParallelism });
  await backend.restore(
    op.subtasks.flatMap((s) => s.keyed),
    readState,
  );
  return new Map(backend.entries(stateName));
}

/** Operator list state of `uid`, per old subtask. */
export async function operatorStateAt<T>(metadata: CheckpointMetadata, uid: string, stateName: string): Promise<T[][]> {
  const op = metadata.operators.find((o) => o.uid === uid);
  if (!op) throw new Error(`no uid ${uid} in checkpoint ${metadata.checkpointId}`);
  const out: T[][] = [];
  for (const s of op.subtasks) {
    const backend = new HeapOperatorStateBackend({ uid, subtask: s.subtask });
    await backend.restore(s.operator ? [s.operator] : [], read);
    out.push([...backend.getListState(new ListStateDescriptor<T>(stateName)).get()]);
  }
  return out;
}

export { readCheckpointMetadataAt };
