/**
 * Visits every state stream a checkpoint's metadata refers to: for sizes, for the shared-state
 * registry, and for checks that a snapshot directory is self-contained.
 */
import { keyedStreamsOf } from '../../state/handles/registry.ts';
import type { StreamStateHandle } from '../../storage/handles.ts';
import { isInside } from '../../storage/paths.ts';
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

/** Distinct paths of the files the stream handles in `meta` lie in (whole, or a range of them), in first-seen order. */
export function filePathsOf(meta: CheckpointMetadata): string[] {
  const seen = new Set<string>();
  for (const h of streamHandlesOf(meta)) {
    if (h.type !== 'inline') seen.add(h.path);
  }
  return [...seen];
}

/** The files of `meta` that live in `sharedDir`: what to register in the shared-state registry for that checkpoint. */
export function sharedPathsOf(meta: CheckpointMetadata, sharedDir: string): string[] {
  return filePathsOf(meta).filter((p) => p !== sharedDir && isInside(sharedDir, p));
}

/** The files of `meta` outside the snapshot directory `dir` (shared files, or state of a restored snapshot). */
export function filePathsOutside(meta: CheckpointMetadata, dir: string): string[] {
  return filePathsOf(meta).filter((p) => !isInside(dir, p));
}

/**
 * Bytes of the files `meta` refers to outside `dir`, at their body size from the handles, each
 * counted once: with the bytes inside `dir`, what a snapshot occupies (see `snapshotSizeBytes`).
 * Of a file shared by ranges only the ranges `meta` names count (each once).
 */
export function bytesReferencedOutside(meta: CheckpointMetadata, dir: string): number {
  const outside = new Set(filePathsOutside(meta, dir));
  const ranges = new Set<string>();
  let total = 0;
  for (const h of streamHandlesOf(meta)) {
    if (h.type === 'file' && outside.delete(h.path)) total += h.size;
    const key = h.type === 'range' ? `${h.path}@${h.offset}` : '';
    if (h.type === 'range' && outside.has(h.path) && !ranges.has(key)) {
      ranges.add(key);
      total += h.length;
    }
  }
  return total;
}
