/**
 * Visits every state stream a checkpoint's metadata refers to: for sizes, for the shared-state
 * registry, and for checks that a snapshot directory is self-contained.
 */
import { keyedStreamsOf, type StreamStateHandle } from '../../storage/handles.ts';
import type { CheckpointMetadata } from './metadata.ts';

/** Every stream handle in `meta`: keyed (every file of an incremental chain), operator and channel state, in metadata order. */
export function streamHandlesOf(meta: CheckpointMetadata): StreamStateHandle[] {
  const out: StreamStateHandle[] = [];
  for (const op of meta.operators) {
    for (const st of op.subtasks) {
      for (const k of st.keyed) out.push(...keyedStreamsOf(k));
      if (st.operator !== null) out.push(st.operator.stream);
      for (const c of st.channels) out.push(c.stream);
    }
  }
  return out;
}

/** Distinct paths of the file handles in `meta`, in first-seen order. */
export function filePathsOf(meta: CheckpointMetadata): string[] {
  const seen = new Set<string>();
  for (const h of streamHandlesOf(meta)) {
    if (h.type === 'file') seen.add(h.path);
  }
  return [...seen];
}
