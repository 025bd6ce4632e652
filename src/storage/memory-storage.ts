/**
 * Checkpoint storage in memory: the filesystem layout under `memory:<job-id>/`, each "file" an
 * entry of a Map holding the same enveloped bytes a file would hold, so the same checks (magic,
 * version, length, checksum) run and tests can corrupt entries through `rawFiles()`.
 */
import { rmSync } from 'node:fs';
import { assert } from '../core/assert.ts';
import { StorageError } from '../core/errors.ts';
import type { CheckpointId, JobId } from '../core/ids.ts';
import { anySnapshotReader } from './any-reader.ts';
import type { StreamStateHandle } from './handles.ts';
import {
  checkpointDir,
  checkpointIdOfSharedFile,
  isInside,
  isMemoryPath,
  joinPath,
  memoryJobDir,
  metadataPath,
  parentDir,
  baseName,
  parseCheckpointDirName,
  savepointDir,
  sharedDir,
  stateFileName,
  METADATA_FILE_NAME,
} from './paths.ts';
import {
  counterSuffixes,
  DEFAULT_INLINE_THRESHOLD_BYTES,
  decodeStateFile,
  encodeStateFile,
  fileHandleFor,
  inlineHandleFor,
  sliceStateRange,
  verifyInline,
} from './state-file.ts';
import type { CheckpointDirEntry, CheckpointStorage, CheckpointStreamFactory, SnapshotPathProbe, StateScope } from './storage.ts';
import type { RestoredFrom } from './restored-from.ts';
import type { SavepointTarget } from './savepoint-target.ts';
import { FsSavepointWriter } from './fs-savepoint.ts';
import { MemorySavepointWriter } from './memory-savepoint.ts';

export interface MemoryCheckpointStorageOptions {
  /** State smaller than this is kept inline in `_metadata`; default 1024. */
  readonly inlineThresholdBytes?: number;
  /** Unique suffixes for file names; default a counter. */
  readonly fileSuffix?: () => string;
  /** The Map holding the files; pass the Map of an earlier instance to model a process restart. */
  readonly files?: Map<string, Uint8Array>;
  /**
   * Checkpoints discarded in the store, shared with the storage that discarded them (a client
   * opened from its store URL, memory-stores.ts); default a set of this instance's own.
   */
  readonly discarded?: Set<number>;
}

/** What a memory store is: its files, and the checkpoints discarded in it (writes for them are refused). */
export interface MemoryStore {
  readonly files: Map<string, Uint8Array>;
  readonly discarded: Set<number>;
}

/** Checkpoint storage of one job kept in a Map keyed by `memory:<job>/...` paths. */
export class MemoryCheckpointStorage implements CheckpointStorage {
  readonly description = 'memory';
  readonly jobDir: string;
  /** Where shared (incremental) files go; the coordinator counts references to them (`SharedStateRegistry`). */
  readonly sharedDir: string;
  private readonly files: Map<string, Uint8Array>;
  /** Checkpoints discarded in this process (by this instance or the one whose store it opened): writes for them are refused. */
  private readonly discarded: Set<number>;
  private readonly inlineThresholdBytes: number;
  private readonly nextSuffix: () => string;

  constructor(
    readonly jobId: JobId,
    options: MemoryCheckpointStorageOptions = {},
  ) {
    this.jobDir = memoryJobDir(jobId);
    this.sharedDir = sharedDir(this.jobDir);
    this.files = options.files ?? new Map();
    this.discarded = options.discarded ?? new Set();
    this.inlineThresholdBytes = options.inlineThresholdBytes ?? DEFAULT_INLINE_THRESHOLD_BYTES;
    assert(Number.isInteger(this.inlineThresholdBytes) && this.inlineThresholdBytes >= 0, () => `invalid inlineThresholdBytes ${options.inlineThresholdBytes}`);
    this.nextSuffix = options.fileSuffix ?? counterSuffixes();
  }

  /** The store clients of this storage share (memory-stores.ts): its files and what it discarded. */
  store(): MemoryStore {
    return { files: this.files, discarded: this.discarded };
  }

  /** The stored bytes by path, envelope included; tests read and overwrite entries to model corruption. */
  rawFiles(): Map<string, Uint8Array> {
    return this.files;
  }

  async initialize(): Promise<{ highestCheckpointId: number }> {
    // Nothing to create: a memory "directory" exists when a file inside it does.
    let highestCheckpointId = 0;
    const complete = new Set<string>();
    for (const file of this.files.keys()) if (baseName(file) === METADATA_FILE_NAME) complete.add(parentDir(file));
    for (const file of [...this.files.keys()]) {
      const dir = parentDir(file);
      const id = parentDir(dir) === this.jobDir ? parseCheckpointDirName(baseName(dir)) : null;
      if (id === null) continue;
      highestCheckpointId = Math.max(highestCheckpointId, id);
      if (!complete.has(dir)) this.files.delete(file);
    }
    // A shared file names the checkpoint that wrote it, which may have left nothing else behind.
    for (const file of await this.listSharedFiles()) highestCheckpointId = Math.max(highestCheckpointId, checkpointIdOfSharedFile(baseName(file)) ?? 0);
    return { highestCheckpointId };
  }

  checkpointDir(checkpointId: CheckpointId): string {
    return checkpointDir(this.jobDir, checkpointId);
  }

  checkpointLocation(checkpointId: CheckpointId): string {
    return this.checkpointDir(checkpointId);
  }

  streamFactory(checkpointId: CheckpointId): CheckpointStreamFactory {
    return {
      checkpointId,
      write: async (scope, nameHint, data) => this.write(checkpointId, scope, nameHint, data),
    };
  }

  private write(checkpointId: CheckpointId, scope: StateScope, nameHint: string, data: Uint8Array): StreamStateHandle {
    assert(data instanceof Uint8Array, () => `state for ${nameHint} is not a Uint8Array`);
    if (data.byteLength < this.inlineThresholdBytes) return inlineHandleFor(data);
    const dir = scope === 'exclusive' ? this.checkpointDir(checkpointId) : sharedDir(this.jobDir);
    if (this.discarded.has(checkpointId))
      throw new StorageError('STORAGE_IO', dir, `checkpoint ${checkpointId} was aborted and discarded; not writing into it`);
    let file = joinPath(dir, stateFileName(nameHint, this.nextSuffix()));
    while (this.files.has(file)) file = joinPath(dir, stateFileName(nameHint, this.nextSuffix()));
    this.files.set(file, encodeStateFile(data));
    return fileHandleFor(file, data);
  }

  async readState(handle: StreamStateHandle): Promise<Uint8Array> {
    if (handle.type === 'inline') return verifyInline(handle);
    // A job may restore from a snapshot on disk while checkpointing to memory.
    if (!isMemoryPath(handle.path)) return anySnapshotReader.readState(handle);
    if (handle.type === 'range') return sliceStateRange(this.get(handle.path, 'state file'), handle);
    // Copy, as a file read would: the caller must not be able to alter what is stored.
    return Uint8Array.from(decodeStateFile(this.get(handle.path, 'state file'), handle));
  }

  async commitMetadata(checkpointId: CheckpointId, bytes: Uint8Array): Promise<string> {
    const dir = this.checkpointDir(checkpointId);
    const file = metadataPath(dir);
    if (this.discarded.has(checkpointId)) throw new StorageError('STORAGE_IO', dir, `checkpoint ${checkpointId} was aborted and discarded`);
    assert(!this.files.has(file), () => `checkpoint ${checkpointId} is already committed at ${file}`);
    this.files.set(file, bytes);
    return dir;
  }

  /** A `memory:` location reads from the map; any other path from the file system (a job may restore from disk). */
  async readMetadataBytes(location: string): Promise<Uint8Array> {
    if (!isMemoryPath(location)) return anySnapshotReader.readMetadataBytes(location);
    return this.get(metadataPath(location), 'checkpoint metadata');
  }

  /** A `memory:` path is looked up in the map ("directories" exist when a key lies under them); others on the file system. */
  async probe(p: string): Promise<SnapshotPathProbe> {
    if (!isMemoryPath(p)) return anySnapshotReader.probe(p);
    if (this.files.has(p)) return { path: p, kind: 'file', hasMetadata: false, checkpointDirs: [] };
    const prefix = `${p}/`;
    if (![...this.files.keys()].some((f) => f.startsWith(prefix))) return { path: p, kind: 'missing', hasMetadata: false, checkpointDirs: [] };
    const hasMetadata = this.files.has(metadataPath(p));
    return { path: p, kind: 'dir', hasMetadata, checkpointDirs: hasMetadata ? [] : this.checkpointDirsUnder(p) };
  }

  /** A state file in memory is checked whole (it is at hand); one on disk by its header. */
  async checkStateFile(handle: StreamStateHandle & { type: 'file' | 'range' }): Promise<void> {
    if (!isMemoryPath(handle.path)) return anySnapshotReader.checkStateFile(handle);
    if (handle.type === 'range') sliceStateRange(this.get(handle.path, 'state file'), handle);
    else decodeStateFile(this.get(handle.path, 'state file'), handle);
  }

  /** A job directory on disk has its record there; one in memory has none (see recordRestoredFrom). */
  async readRestoredFrom(jobDir: string): Promise<RestoredFrom | null> {
    return isMemoryPath(jobDir) ? null : anySnapshotReader.readRestoredFrom(jobDir);
  }

  /** Keeps nothing: memory storage dies with the process, and lineage matters only to a later process. */
  async recordRestoredFrom(_r: RestoredFrom): Promise<void> {}

  async dirSizeBytes(location: string): Promise<number> {
    if (!isMemoryPath(location)) return anySnapshotReader.dirSizeBytes(location);
    let total = 0;
    for (const [file, bytes] of this.files) {
      if (file.startsWith(`${location}/`)) total += bytes.byteLength;
    }
    return total;
  }

  async listCheckpointDirs(): Promise<CheckpointDirEntry[]> {
    return this.checkpointDirsUnder(this.jobDir);
  }

  /** The chk-<n> "directories" directly under `dir` (those holding any key), ascending by id. */
  private checkpointDirsUnder(dir: string): CheckpointDirEntry[] {
    const byId = new Map<CheckpointId, CheckpointDirEntry>();
    for (const file of this.files.keys()) {
      const chk = parentDir(file);
      const id = parentDir(chk) === dir ? parseCheckpointDirName(baseName(chk)) : null;
      if (id === null || byId.get(id)?.hasMetadata === true) continue;
      byId.set(id, { checkpointId: id, location: chk, hasMetadata: baseName(file) === METADATA_FILE_NAME });
    }
    return [...byId.values()].sort((a, b) => a.checkpointId - b.checkpointId);
  }

  async discardCheckpoint(checkpointId: CheckpointId): Promise<void> {
    this.discarded.add(checkpointId);
    const prefix = `${this.checkpointDir(checkpointId)}/`;
    for (const file of [...this.files.keys()]) {
      if (file.startsWith(prefix)) this.files.delete(file);
    }
  }

  /** `memory:` roots keep the savepoint in this storage's file map (shared with later jobs); others go to disk. */
  createSavepointTarget(savepointRoot: string, checkpointId: CheckpointId, rand: string): SavepointTarget {
    const dir = savepointDir(savepointRoot, checkpointId, rand);
    return isMemoryPath(savepointRoot) ? new MemorySavepointWriter(this.files, dir, this.inlineThresholdBytes) : new FsSavepointWriter(dir);
  }

  savepointTargetAt(location: string): SavepointTarget {
    return isMemoryPath(location) ? new MemorySavepointWriter(this.files, location, this.inlineThresholdBytes) : new FsSavepointWriter(location);
  }

  async discardCheckpointAt(location: string): Promise<void> {
    const id = parseCheckpointDirName(baseName(location));
    if (id === null) throw new StorageError('STORAGE_IO', location, 'not a checkpoint directory (chk-<n>); refusing to delete it');
    if (!isMemoryPath(location)) {
      rmSync(location, { recursive: true, force: true });
      return;
    }
    if (parentDir(location) === this.jobDir) this.discarded.add(id);
    for (const file of [...this.files.keys()]) if (file.startsWith(`${location}/`)) this.files.delete(file);
  }

  async discardShared(handle: StreamStateHandle): Promise<void> {
    if (handle.type === 'inline') return;
    const shared = sharedDir(this.jobDir);
    assert(isInside(shared, handle.path) && handle.path !== shared, () => `discardShared: ${handle.path} is not in ${shared}`);
    this.files.delete(handle.path);
  }

  async listSharedFiles(): Promise<string[]> {
    return [...this.files.keys()].filter((f) => parentDir(f) === this.sharedDir);
  }

  async discardJob(): Promise<void> {
    // Nothing to remove: memory has no directories, and shared files are deleted one by one.
  }

  private get(file: string, what: string): Uint8Array {
    const bytes = this.files.get(file);
    if (bytes === undefined) throw new StorageError('MISSING_FILE', file, `${what} is missing`);
    return bytes;
  }
}
