/**
 * State backends whose async snapshot parts start late, as behind a busy upload pool: between a
 * snapshot's sync part and its async part the task goes on processing records, so writes, overwrites
 * and deletions hit keys the snapshot pinned (copy-on-write, pre-images of incremental deltas).
 * Counts the keyed state changes made while a snapshot of the same backend waited or ran.
 */
import type { CheckpointId } from '../../core/ids.ts';
import type { Random, Scheduler } from '../../core/time.ts';
import type { KeyedStateHandle } from '../../state/handles/registry.ts';
import type { CheckpointStreamFactory } from '../../storage/storage.ts';
import type { KeyedStateBackend, SnapshotOptions, SnapshotRunner, StateBackendFactory } from '../../state/backend.ts';

/** Changes to keyed state made while a snapshot of its backend was between its sync part and the end of its async part. */
export interface PinnedWrites {
  overwrites: number;
  deletions: number;
}

export class DelayedSnapshots {
  readonly counts: PinnedWrites = { overwrites: 0, deletions: 0 };

  constructor(
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly delayMsMax: number,
  ) {}

  wrap(inner: StateBackendFactory): StateBackendFactory {
    return {
      name: inner.name,
      createKeyedBackend: (args) => this.delayed(inner.createKeyedBackend(args)),
      createOperatorBackend: (args) => inner.createOperatorBackend(args),
    };
  }

  private delayed(backend: KeyedStateBackend): KeyedStateBackend {
    const snapshot = backend.snapshot.bind(backend);
    let open = 0;
    backend.setChangeListener({
      onChange: (_name, _group, _key, op) => {
        if (open === 0) return;
        if (op === 'clear' || op === 'mapRemove') this.counts.deletions++;
        else this.counts.overwrites++;
      },
    });
    backend.snapshot = (id: CheckpointId, streams: CheckpointStreamFactory, options?: SnapshotOptions): SnapshotRunner<KeyedStateHandle[]> => {
      const runner = snapshot(id, streams, options);
      open++;
      const delayMs = this.random.next() * this.delayMsMax;
      return {
        get syncInfo() {
          return runner.syncInfo;
        },
        run: async (pause) => {
          try {
            await new Promise<void>((resolve) => this.scheduler.schedule(delayMs, resolve));
            return await runner.run(pause);
          } finally {
            open--;
          }
        },
      };
    };
    return backend;
  }
}
