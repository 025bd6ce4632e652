/**
 * Writing a savepoint into S3: every state object of it below its own stable prefix
 * (`<root>/savepoint-<id>-<rand>/`, never with entropy), so it is self-contained and relocatable
 * (copy the prefix anywhere, resume from the copy), and `_metadata` last, create-only.
 */
import { assert } from '../../core/assert.ts';
import type { CheckpointId } from '../../core/ids.ts';
import { metadataPath } from '../paths.ts';
import type { SavepointTarget } from '../savepoint-target.ts';
import { DEFAULT_INLINE_THRESHOLD_BYTES, inlineHandleFor } from '../state-file.ts';
import { joinParts, type CheckpointStreamFactory } from '../storage.ts';
import { commitCreateOnly } from './commit.ts';
import type { S3Objects } from './objects.ts';
import { writeStateObject } from './state-objects.ts';

/** One savepoint below its own S3 prefix. */
export class S3SavepointWriter implements SavepointTarget {
  constructor(
    private readonly objects: S3Objects,
    readonly location: string,
    private readonly inlineThresholdBytes = DEFAULT_INLINE_THRESHOLD_BYTES,
  ) {}

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    const writeParts = async (nameHint: string, parts: readonly Uint8Array[]) => {
      let size = 0;
      for (const p of parts) size += p.byteLength;
      if (size < this.inlineThresholdBytes) return inlineHandleFor(joinParts(parts));
      return writeStateObject(this.objects, this.location, nameHint, parts);
    };
    return {
      checkpointId,
      write: (_scope, nameHint, data) => {
        assert(data instanceof Uint8Array, () => `state for ${nameHint} is not a Uint8Array`);
        return writeParts(nameHint, [data]);
      },
      writeParts: (_scope, nameHint, parts) => writeParts(nameHint, parts),
    };
  }

  async discardIncomplete(): Promise<void> {
    if ((await this.objects.head(metadataPath(this.location))) === null) await this.objects.deleteBelow(this.location);
  }

  async commitMetadata(bytes: Uint8Array): Promise<string> {
    await commitCreateOnly(this.objects, metadataPath(this.location), bytes, 'savepoint');
    return this.location;
  }
}
