/** The `heap` state backend: keyed and operator state in memory, snapshots copy-on-write. */
import type { StateBackendFactory } from '../backend.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import { HeapKeyedStateBackend } from './heap-keyed-backend.ts';
import { HeapOperatorStateBackend } from './heap-operator-backend.ts';

/** Creates heap backends; returns the concrete classes so callers can reach `restoreRedistributed`. */
export class HeapStateBackendFactory implements StateBackendFactory {
  readonly name = 'heap';

  createKeyedBackend(args: { uid: string; subtask: number; keyGroupRange: KeyGroupRange; maxParallelism: number }): HeapKeyedStateBackend {
    return new HeapKeyedStateBackend(args);
  }

  createOperatorBackend(args: { uid: string; subtask: number }): HeapOperatorStateBackend {
    return new HeapOperatorStateBackend(args);
  }
}
