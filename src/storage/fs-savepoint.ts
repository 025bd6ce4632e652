/**
 * Writing a savepoint: a checkpoint with savepoint properties whose files all live in its own
 * directory, so that it is self-contained and relocatable (the metadata's paths are relative to it;
 * `checkpoint/metadata/commit.ts` checks that none leads outside).
 */
import * as path from 'node:path';
import { assert } from '../core/assert.ts';
import type { CheckpointId } from '../core/ids.ts';
import { fsyncDir, writeFileAtomic } from './atomic-write.ts';
import { makeDir, pathKind, writeNewFile, writeNewStateFileParts } from './fs-io.ts';
import { metadataPath } from './paths.ts';
import { counterSuffixes, DEFAULT_INLINE_THRESHOLD_BYTES, encodeStateFile, fileHandleFor, inlineHandleFor } from './state-file.ts';
import { joinParts, type CheckpointStreamFactory } from './storage.ts';
import type { SavepointTarget } from './savepoint-target.ts';
import { rmSync } from 'node:fs';

export interface FsSavepointWriterOptions {
  /** State smaller than this is kept inline in `_metadata`; default 1024. */
  readonly inlineThresholdBytes?: number;
  /** Unique suffixes for file names; default a counter. */
  readonly fileSuffix?: () => string;
}

/**
 * Writes one savepoint into its own directory (`paths.savepointDir`): every state file, whatever
 * its scope, goes inside it, so the directory is self-contained and can be moved.
 */
export class FsSavepointWriter implements SavepointTarget {
  readonly location: string;
  private readonly inlineThresholdBytes: number;
  private readonly nextSuffix: () => string;

  constructor(savepointDirPath: string, options: FsSavepointWriterOptions = {}) {
    this.location = path.resolve(savepointDirPath);
    this.inlineThresholdBytes = options.inlineThresholdBytes ?? DEFAULT_INLINE_THRESHOLD_BYTES;
    this.nextSuffix = options.fileSuffix ?? counterSuffixes();
  }

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    return {
      checkpointId,
      write: async (_scope, nameHint, data) => {
        assert(data instanceof Uint8Array, () => `state for ${nameHint} is not a Uint8Array`);
        if (data.byteLength < this.inlineThresholdBytes) return inlineHandleFor(data);
        await makeDir(this.location);
        return fileHandleFor(await writeNewFile(this.location, nameHint, encodeStateFile(data), this.nextSuffix), data);
      },
      writeParts: async (_scope, nameHint, parts) => {
        let size = 0;
        for (const p of parts) size += p.byteLength;
        if (size < this.inlineThresholdBytes) return inlineHandleFor(joinParts(parts));
        await makeDir(this.location);
        const written = await writeNewStateFileParts(this.location, nameHint, parts, this.nextSuffix);
        return { type: 'file', path: written.file, size: written.size, checksum: written.checksum };
      },
    };
  }

  async discardIncomplete(): Promise<void> {
    if ((await pathKind(metadataPath(this.location))) === 'missing') rmSync(this.location, { recursive: true, force: true });
  }

  /** Writes `bytes` as `_metadata` atomically, then makes the savepoint directory's own entry durable. */
  async commitMetadata(bytes: Uint8Array): Promise<string> {
    const file = metadataPath(this.location);
    assert((await pathKind(file)) === 'missing', () => `savepoint already committed at ${file}`);
    await makeDir(this.location);
    await writeFileAtomic(file, bytes, this.nextSuffix());
    await fsyncDir(path.dirname(this.location));
    return this.location;
  }
}
