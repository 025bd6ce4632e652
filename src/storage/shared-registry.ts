/**
 * The shared-state registry: reference counts of shared (incremental) files across retained
 * checkpoints. Pure bookkeeping, no I/O: it decides which files may be deleted, the storage deletes
 * them. A file is released for deletion only when no registered checkpoint refers to it (Invariant 5).
 */
import { assert } from '../core/assert.ts';
import type { CheckpointId } from '../core/ids.ts';

/** Reference counts of shared files by the retained checkpoints that refer to them. */
export class SharedStateRegistry {
  private readonly byCheckpoint = new Map<CheckpointId, readonly string[]>();
  private readonly refCounts = new Map<string, number>();

  /**
   * Records that checkpoint `checkpointId` refers to `sharedPaths` (duplicates count once). Call it
   * when the checkpoint completes, and on restore for every retained checkpoint.
   */
  register(checkpointId: CheckpointId, sharedPaths: readonly string[]): void {
    assert(!this.byCheckpoint.has(checkpointId), () => `checkpoint ${checkpointId} is already registered`);
    const paths = [...new Set(sharedPaths)];
    this.byCheckpoint.set(checkpointId, paths);
    for (const p of paths) this.refCounts.set(p, (this.refCounts.get(p) ?? 0) + 1);
  }

  /**
   * Forgets checkpoint `checkpointId` (subsumed or discarded) and returns the paths no other
   * registered checkpoint refers to: those may now be deleted. Unknown ids release nothing.
   */
  release(checkpointId: CheckpointId): string[] {
    const paths = this.byCheckpoint.get(checkpointId);
    if (paths === undefined) return [];
    this.byCheckpoint.delete(checkpointId);
    const unreferenced: string[] = [];
    for (const p of paths) {
      const count = this.refCounts.get(p);
      assert(count !== undefined && count > 0, () => `shared file ${p} of checkpoint ${checkpointId} has no count`);
      if (count === 1) {
        this.refCounts.delete(p);
        unreferenced.push(p);
      } else {
        this.refCounts.set(p, count - 1);
      }
    }
    return unreferenced;
  }

  /** The shared paths checkpoint `checkpointId` was registered with (empty if it is not registered). */
  registeredFor(checkpointId: CheckpointId): readonly string[] {
    return this.byCheckpoint.get(checkpointId) ?? [];
  }

  /** Registered checkpoint ids, ascending. */
  checkpoints(): CheckpointId[] {
    return [...this.byCheckpoint.keys()].sort((a, b) => a - b);
  }

  /** Current reference count of every shared path that has one. */
  counts(): ReadonlyMap<string, number> {
    return new Map(this.refCounts);
  }
}
