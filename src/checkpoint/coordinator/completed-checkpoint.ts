/** A checkpoint whose metadata is durably written: restorable. */
import type { CheckpointId } from '../../core/ids.ts';
import type { CheckpointMetadata } from '../metadata/metadata.ts';

export interface CompletedCheckpoint {
  readonly checkpointId: CheckpointId;
  readonly metadata: CheckpointMetadata;
  /** Directory (or memory key) holding `_metadata`. */
  readonly location: string;
  readonly kind: 'checkpoint' | 'savepoint';
}
