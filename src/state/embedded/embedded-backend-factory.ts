/**
 * The `embedded` state backend: keyed state in a local lmdb store per subtask behind a bounded
 * cache, incremental checkpoints by default; operator state (small: source positions, sink
 * transactions) stays on the heap.
 */
import type { StateBackendFactory } from '../backend.ts';
import { HeapOperatorStateBackend } from '../heap/heap-operator-backend.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import { EmbeddedKeyedStateBackend, type EmbeddedBackendOptions } from './embedded-keyed-backend.ts';

export class EmbeddedStateBackendFactory implements StateBackendFactory {
  readonly name = 'embedded';

  constructor(readonly options: EmbeddedBackendOptions = {}) {}

  createKeyedBackend(args: { uid: string; subtask: number; keyGroupRange: KeyGroupRange; maxParallelism: number }): EmbeddedKeyedStateBackend {
    return new EmbeddedKeyedStateBackend(args, this.options);
  }

  createOperatorBackend(args: { uid: string; subtask: number }): HeapOperatorStateBackend {
    return new HeapOperatorStateBackend(args);
  }
}
