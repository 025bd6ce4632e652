/** Test doubles for state tests: an in-memory stream factory that keeps every stream inline. */
import type { CheckpointId } from '../../src/core/ids.ts';
import { checkpointId } from '../../src/core/ids.ts';
import type { StateReader } from '../../src/state/backend.ts';
import type { StreamStateHandle } from '../../src/storage/handles.ts';
import type { CheckpointStreamFactory, StateScope } from '../../src/storage/storage.ts';

export class InlineStreams implements CheckpointStreamFactory {
  readonly checkpointId: CheckpointId;
  readonly writes: Array<{ scope: StateScope; nameHint: string; bytes: number }> = [];

  constructor(id = 1) {
    this.checkpointId = checkpointId(id);
  }

  async write(scope: StateScope, nameHint: string, data: Uint8Array): Promise<StreamStateHandle> {
    this.writes.push({ scope, nameHint, bytes: data.byteLength });
    return { type: 'inline', data: data.slice(), checksum: 0 };
  }
}

/** Reads inline handles; counts reads so tests can check which streams a restore touched. */
export function inlineReader(): StateReader & { reads: number } {
  const reader = Object.assign(
    async (handle: StreamStateHandle): Promise<Uint8Array> => {
      reader.reads++;
      if (handle.type !== 'inline') throw new Error(`test reader only reads inline handles, got ${handle.type}`);
      return handle.data;
    },
    { reads: 0 },
  );
  return reader;
}
