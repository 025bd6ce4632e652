/**
 * What every kind of keyed state handle answers, as one descriptor object per kind (one module
 * each, listed in `registry.ts`). The code that acknowledges, registers, serializes, inspects and
 * restores keyed state asks the kind's descriptor instead of switching on `handle.type`, so a new
 * kind is one module and one registry line. Descriptors are used at snapshot, completion, restore
 * and inspection time, never per record.
 *
 * Two things are the same for every kind and so are no members: which handles a key-group range
 * needs on rescale (those whose `range` intersects it, `state/redistribute.ts`; `restore` then
 * reads only the key groups of the target's range), and which files the shared-state registry
 * counts (every stream inside the job's `shared/` directory, whatever handle refers to it).
 */
import type { StreamStateHandle } from '../../storage/handles.ts';
import type { WireCheck } from '../../storage/wire-check.ts';
import type { StateReader } from '../backend.ts';
import type { KeyedSectionFigure } from '../formats/keyed-file-inspect.ts';
import type { KeyedRestoreTarget } from '../formats/keyed-file-reader.ts';
import type { KeyGroupRange } from '../key-groups.ts';

/** What every keyed handle carries, whatever its kind. */
export interface KeyedHandleBase {
  /** The kind: the key of its descriptor in the registry. */
  readonly type: string;
  /** The key groups it holds state of; a restore of another range reads only the key groups both hold. */
  readonly range: KeyGroupRange;
  /** Number of keys per state name (after applying everything it refers to), for inspection and figures. */
  readonly keyCounts: Readonly<Record<string, number>>;
}

/** The figures of one handle for the checkpoint ack. */
export interface KeyedHandleSizes {
  /** Bytes its own checkpoint wrote (files reused from earlier checkpoints not counted). */
  readonly persistedBytes: number;
  /** Bytes of everything it refers to: what a restore reads. */
  readonly stateBytes: number;
}

/** How a metadata body holds a stream inside a handle: a file's path relative to the directory of `_metadata`. */
export type WriteMetadataStream = (stream: StreamStateHandle) => unknown;
/** Reads (and checks) a stream written by a `WriteMetadataStream`, resolving a file's path; `at` names it in errors. */
export type ReadMetadataStream = (value: unknown, at: string) => StreamStateHandle;

/**
 * A handle's layout inside a metadata body (a msgpack map). Part of the metadata format: once a
 * format version is released the layout is frozen, and a change is a new metadata version.
 */
export interface MetadataLayout<H extends KeyedHandleBase> {
  /** The body's `type` field that names the kind (undefined: the field is absent, as for full handles since format 1). */
  readonly tag: string | undefined;
  /** The map written for `handle`, its `type` field included when `tag` is set. */
  write(handle: H, writeStream: WriteMetadataStream): Record<string, unknown>;
  /** Reads a map written by `write`; `at` names it in errors. */
  read(check: WireCheck, map: Record<string, unknown>, at: string, readStream: ReadMetadataStream): H;
}

/** One kind of keyed state handle. */
export interface KeyedHandleKind<H extends KeyedHandleBase> {
  readonly type: H['type'];
  /** Every stream the handle refers to, in restore order. */
  streams(handle: H): StreamStateHandle[];
  sizes(handle: H): KeyedHandleSizes;
  /**
   * The oldest checkpoint whose files the handle's subtask may still reuse in later snapshots (the
   * newest completed checkpoint it knew of): -Infinity when it knew of none, +Infinity when the
   * kind reuses no files. A released shared file of an older checkpoint may then be deleted.
   */
  reusesFilesFrom(handle: H): number;
  readonly metadata: MetadataLayout<H>;
  /** Per state and key group of each of its files: the state's kind and bytes (`weir savepoint inspect`). */
  inspect(handle: H, read: StateReader): Promise<KeyedSectionFigure[]>;
  /**
   * Applies the handle's state of the key groups it shares with the target's range to the target's
   * sink, checking its files as it reads them. The caller has checked that the ranges intersect
   * and that the handle's range fits the target's maxParallelism.
   */
  restore(handle: H, target: KeyedRestoreTarget): Promise<void>;
}
