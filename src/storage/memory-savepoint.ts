/**
 * A savepoint kept in memory under its own key prefix (`memory:savepoints/savepoint-<id>-<rand>`),
 * in a file map shared with memory checkpoint storage, so a later job restores from it. For the
 * simulator and tests; the envelope and checksums are the same as on disk.
 */
import { assert } from '../core/assert.ts';
import type { CheckpointId } from '../core/ids.ts';
import { joinPath, metadataPath, stateFileName } from './paths.ts';
import { counterSuffixes, encodeStateFile, fileHandleFor, inlineHandleFor } from './state-file.ts';
import type { SavepointTarget } from './savepoint-target.ts';
import type { CheckpointStreamFactory } from './storage.ts';

export class MemorySavepointWriter implements SavepointTarget {
  private readonly nextSuffix = counterSuffixes();

  constructor(
    private readonly files: Map<string, Uint8Array>,
    readonly location: string,
    private readonly inlineThresholdBytes = 64,
  ) {
    assert(location.startsWith('memory:'), `memory savepoint location must start with memory:, got ${location}`);
  }

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    return {
      checkpointId,
      write: async (_scope, nameHint, data) => {
        if (data.byteLength < this.inlineThresholdBytes) return inlineHandleFor(data);
        let file = joinPath(this.location, stateFileName(nameHint, this.nextSuffix()));
        while (this.files.has(file)) file = joinPath(this.location, stateFileName(nameHint, this.nextSuffix()));
        this.files.set(file, encodeStateFile(data));
        return fileHandleFor(file, data);
      },
    };
  }

  async commitMetadata(bytes: Uint8Array): Promise<string> {
    const file = metadataPath(this.location);
    assert(!this.files.has(file), () => `savepoint already committed at ${file}`);
    this.files.set(file, bytes);
    return this.location;
  }

  async discardIncomplete(): Promise<void> {
    if (this.files.has(metadataPath(this.location))) return;
    for (const key of [...this.files.keys()]) if (key.startsWith(`${this.location}/`)) this.files.delete(key);
  }
}
