/**
 * Metadata format version 3: version 2's body (see `metadata-v2.ts`) with one more key,
 * `chainLayout: 'tree'`, saying how the in-flight data of an unaligned checkpoint numbers its gates:
 * chains branch (an operator is chained to each forward consumer), so a vertex's output gates are
 * the edges leaving any of its operators. Versions 1 and 2 were written when an operator with
 * several consumers ended its chain; their in-flight data is numbered by that layout.
 *
 *   body = { ...version 2's keys, chainLayout: 'tree' }
 *
 * The serializer writes 3 only for a checkpoint that holds in-flight data (the only part the layout
 * numbers), so other checkpoints stay readable by a Weir that knows only 1 or 2. Once released,
 * kept forever and never edited.
 */
import { WireCheck } from '../../storage/wire-check.ts';
import type { CheckpointMetadata } from './metadata.ts';
import { readMetadataV2, writeMetadataV2 } from './metadata-v2.ts';

export function writeMetadataV3(meta: CheckpointMetadata, metadataDir: string): unknown {
  return { ...(writeMetadataV2(meta, metadataDir) as Record<string, unknown>), chainLayout: 'tree' };
}

/** Reads a decoded V3 body; file paths are resolved against `metadataDir`. */
export function readMetadataV3(body: unknown, metadataDir: string, file: string): CheckpointMetadata {
  const c = new WireCheck(file);
  const chainLayout = c.oneOf(c.object(body, 'root').chainLayout, 'chainLayout', ['tree'] as const);
  return { ...readMetadataV2(body, metadataDir, file), chainLayout };
}

/** Whether `meta` needs format 3: it holds in-flight data numbered by branching chains. */
export function needsMetadataV3(meta: CheckpointMetadata): boolean {
  return meta.chainLayout === 'tree' && meta.operators.some((op) => op.subtasks.some((s) => s.channels.length > 0));
}
