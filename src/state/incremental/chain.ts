/**
 * Decisions about incremental chains, pure: whether a snapshot writes a new base or a delta on the
 * chain of the last completed checkpoint, and whether a restored chain can be extended.
 */
import { streamSize } from '../../storage/handles.ts';
import { incrementalHandleKind, type IncrementalKeyGroupsStateHandle, type IncrementalStateFile } from '../handles/incremental.ts';
import { isKeyedHandleOf, type KeyedStateHandle } from '../handles/registry.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import { rangesIntersect } from '../key-groups.ts';

/** The chain of a completed checkpoint, which the next deltas extend. */
export interface CompletedChain {
  readonly checkpointId: number;
  readonly files: readonly IncrementalStateFile[];
  /** Size of the base file. */
  readonly baseBytes: number;
  /** Sizes of the increments after the base, summed. */
  readonly deltaBytes: number;
  /** Keys in the state the chain restores to (all states). */
  readonly keys: number;
}

/** Bytes a changed key is assumed to take in a delta when the base has no figure for it. */
export const DEFAULT_BYTES_PER_KEY = 64;

export function chainOf(handle: IncrementalKeyGroupsStateHandle): CompletedChain {
  let baseBytes = 0;
  let deltaBytes = 0;
  for (const f of handle.files) {
    if (f.kind === 'base') baseBytes += streamSize(f.stream);
    else deltaBytes += streamSize(f.stream);
  }
  let keys = 0;
  for (const n of Object.values(handle.keyCounts)) keys += n;
  return { checkpointId: handle.checkpointId, files: handle.files, baseBytes, deltaBytes, keys };
}

export interface SnapshotPlanInput {
  /** The chain a delta would extend; null when there is none. */
  readonly chain: CompletedChain | null;
  /** False when changes since that chain are not all known (lost, or the restore asked for a full first checkpoint). */
  readonly changesKnown: boolean;
  /** Distinct changed keys since the chain (an upper bound). */
  readonly changedKeys: number;
  /** A new base is written once the increments would exceed this share of the base. */
  readonly incrementsShareMax: number;
}

/**
 * 'delta' extends the chain; 'base' starts a new one. A base is written when there is no chain to
 * extend, when changes are not all known, or when the increments, with this one estimated from the
 * base's bytes per key, would pass `incrementsShareMax` times the base: that bounds how much a
 * restore reads beyond the state itself.
 */
export function planSnapshot(input: SnapshotPlanInput): 'base' | 'delta' {
  const { chain } = input;
  if (chain === null || !input.changesKnown || chain.files.length === 0) return 'base';
  const bytesPerKey = chain.keys > 0 ? chain.baseBytes / chain.keys : DEFAULT_BYTES_PER_KEY;
  const estimate = input.changedKeys * bytesPerKey;
  return chain.deltaBytes + estimate > input.incrementsShareMax * chain.baseBytes ? 'base' : 'delta';
}

/**
 * The chain a restored backend may extend: only when one incremental handle covers exactly its
 * key-group range (the same parallelism) and nothing else overlaps it. After a rescale the first
 * snapshot writes a base.
 */
export function restoredChain(handles: readonly KeyedStateHandle[], range: KeyGroupRange): CompletedChain | null {
  const overlapping = handles.filter((h) => rangesIntersect(h.range, range));
  if (overlapping.length !== 1) return null;
  const h = overlapping[0]!;
  if (!isKeyedHandleOf(h, incrementalHandleKind) || h.range.start !== range.start || h.range.end !== range.end) return null;
  return chainOf(h);
}
