/**
 * The incremental keyed handle: the state of one key-group range as a chain of files in the job's
 * `shared/` directory, a base and then increments (with deletions), oldest first. Files written by
 * the handle's own checkpoint are new; the others are reused from earlier checkpoints, which is why
 * they are reference-counted and kept while a subtask may still extend a chain that holds them.
 */
import { StorageError } from '../../core/errors.ts';
import { streamSize, type StreamStateHandle } from '../../storage/handles.ts';
import { inspectKeyedFile } from '../formats/keyed-file-inspect.ts';
import { applyKeyedFiles } from '../formats/keyed-file-reader.ts';
import { streamName } from '../formats/stream-format.ts';
import type { KeyGroupRange } from '../key-groups.ts';
import type { KeyedHandleKind } from './kind.ts';
import { readKeyCounts, readOffsets, readRange, writeKeyCounts, writeOffsets, writeRange } from './metadata-fields.ts';

/** One immutable file of an incremental chain: a full base, or the changes (with deletions) since the previous file. */
export interface IncrementalStateFile {
  readonly kind: 'base' | 'delta';
  /** The checkpoint whose snapshot wrote the file. */
  readonly checkpointId: number;
  /** [keyGroup, offset, length] for each key group the file holds, ascending by key group. */
  readonly offsets: ReadonlyArray<readonly [number, number, number]>;
  readonly stream: StreamStateHandle;
}

/**
 * Keyed state of one key-group range as a chain of shared files: a base, then increments, oldest
 * first. Restore applies them in order (an increment's deletions remove keys).
 */
export interface IncrementalKeyGroupsStateHandle {
  readonly type: 'incremental-key-groups';
  readonly range: KeyGroupRange;
  /** The checkpoint whose snapshot made this handle. */
  readonly checkpointId: number;
  /**
   * The newest completed checkpoint the backend knew of at the sync phase (null: none). Its later
   * chains reuse only files of that or newer checkpoints, which tells the coordinator when a
   * released file can no longer be reused and may be deleted.
   */
  readonly knownCompletedCheckpointId: number | null;
  readonly files: readonly IncrementalStateFile[];
  /** Number of keys per state name after applying the whole chain. */
  readonly keyCounts: Readonly<Record<string, number>>;
}

/** A chain starts with its base, has no other base, and no file is newer than the handle's checkpoint. */
function checkChain(files: readonly IncrementalStateFile[], checkpointId: number): void {
  files.forEach((f, i) => {
    const label = streamName(f.stream);
    if ((i === 0) !== (f.kind === 'base'))
      throw new StorageError('CORRUPT_FILE', label, `incremental chain file ${i} is a ${f.kind}; a chain is one base followed by increments`);
    if (f.checkpointId > checkpointId)
      throw new StorageError('CORRUPT_FILE', label, `written by checkpoint ${f.checkpointId}, newer than checkpoint ${checkpointId} that refers to it`);
  });
}

/** The descriptor of incremental keyed handles. */
export const incrementalHandleKind: KeyedHandleKind<IncrementalKeyGroupsStateHandle> = {
  type: 'incremental-key-groups',
  streams: (handle) => handle.files.map((f) => f.stream),
  sizes(handle) {
    let persistedBytes = 0;
    let stateBytes = 0;
    for (const f of handle.files) {
      const size = streamSize(f.stream);
      stateBytes += size;
      if (f.checkpointId === handle.checkpointId) persistedBytes += size;
    }
    return { persistedBytes, stateBytes };
  },
  reusesFilesFrom: (handle) => handle.knownCompletedCheckpointId ?? -Infinity,
  // Format 1: { type: 'incremental', range, checkpointId, knownCompletedCheckpointId: n | null,
  //   files: [{ kind: 'base' | 'delta', checkpointId, offsets, stream }], keyCounts }
  metadata: {
    tag: 'incremental',
    write: (handle, writeStream) => ({
      type: 'incremental',
      range: writeRange(handle.range),
      checkpointId: handle.checkpointId,
      knownCompletedCheckpointId: handle.knownCompletedCheckpointId,
      files: handle.files.map((f) => ({ kind: f.kind, checkpointId: f.checkpointId, offsets: writeOffsets(f.offsets), stream: writeStream(f.stream) })),
      keyCounts: writeKeyCounts(handle.keyCounts),
    }),
    read(c, o, at, readStream) {
      const files = c.array(o.files, `${at}.files`).map((v, i): IncrementalStateFile => {
        const f = c.object(v, `${at}.files[${i}]`);
        return {
          kind: c.oneOf(f.kind, `${at}.files[${i}].kind`, ['base', 'delta'] as const),
          checkpointId: c.int(f.checkpointId, `${at}.files[${i}].checkpointId`),
          offsets: readOffsets(c, f.offsets, `${at}.files[${i}].offsets`),
          stream: readStream(f.stream, `${at}.files[${i}].stream`),
        };
      });
      return {
        type: 'incremental-key-groups',
        range: readRange(c, o.range, `${at}.range`),
        checkpointId: c.int(o.checkpointId, `${at}.checkpointId`),
        knownCompletedCheckpointId: o.knownCompletedCheckpointId === null ? null : c.int(o.knownCompletedCheckpointId, `${at}.knownCompletedCheckpointId`),
        files,
        keyCounts: readKeyCounts(c, o.keyCounts, `${at}.keyCounts`),
      };
    },
  },
  async inspect(handle, read) {
    return (await Promise.all(handle.files.map((f) => inspectKeyedFile(f.stream, f.offsets, read)))).flat();
  },
  async restore(handle, target) {
    checkChain(handle.files, handle.checkpointId);
    const files = handle.files.map((f) => ({ layout: f.kind === 'base' ? ('full' as const) : ('delta' as const), offsets: f.offsets, stream: f.stream }));
    await applyKeyedFiles(files, handle.range, target);
  },
};
