/**
 * The split-source API: a source divided into splits (a partition, a stream key, a replication
 * slot), each read from a position that is checkpointed per split. The source lists its splits;
 * every subtask takes the splits `splitOwner` gives it (a pure function of the split and the
 * parallelism, so all subtasks agree without talking to each other and a rescale moves splits with
 * their positions); a `SplitReader` fetches records asynchronously into a bounded queue that the
 * task drains without awaiting. `SplitSourceReader` adapts all this to the runtime's `SourceReader`.
 */
import type { RuntimeContext } from './functions.ts';

/**
 * One split of a source. It goes into operator state with its position, so it must be plain data
 * (msgpack-serialisable) and describe the split fully: a restore may reach a subtask that never
 * listed it.
 */
export interface SourceSplit {
  /** Names the split uniquely within its source and for ever (positions are mapped by it). */
  readonly id: string;
  /**
   * A fixed number for splits of a fixed, numbered set (partition 0..n-1): such splits are dealt
   * round-robin (`ordinal mod parallelism`), which balances them. Leave it out for discovered
   * splits: they are placed by a hash of `id`, which needs no agreement on the set.
   */
  readonly ordinal?: number;
}

/** A split with the position reading starts from. */
export interface SplitAssignment<Split extends SourceSplit, Position> {
  /** The split. */
  readonly split: Split;
  /** Its position: read the records after it. */
  readonly position: Position;
}

/**
 * Records of one split fetched together: `positions[i]` is the split's position after
 * `records[i]` (what a restore resumes from once `records[i]` was emitted). Positions must be
 * immutable, msgpack-serialisable values (a number, a string, a frozen object).
 */
export interface SplitBatch<T, Position> {
  /** The split the records belong to. */
  readonly splitId: string;
  /** The records, in the split's order. */
  readonly records: readonly T[];
  /** The position after each record: as many as `records`. */
  readonly positions: readonly Position[];
  /**
   * The split's position once the whole batch is emitted, when it moved past the last record
   * (a heartbeat or a skipped entry advanced it). Default: the last of `positions`.
   */
  readonly endPosition?: Position;
  /** The split has no more records (bounded sources): it is kept in state as ended. */
  readonly splitEnded?: boolean;
}

/** Reads the splits of one subtask; one per subtask and attempt. */
export interface SplitReader<T, Split extends SourceSplit, Position> {
  /**
   * Connects and prepares to read `splits` from their positions (the records after each
   * position). Called once, before the first fetch. It may resolve with positions it pinned (a
   * "latest" marker turned into the concrete position it stands for now, by split id): they replace
   * the assigned ones before anything is snapshotted, so a restore never re-resolves a marker. A
   * rejection fails the subtask: reject with a `ConnectorError` naming the server and its address.
   */
  open(splits: readonly SplitAssignment<Split, Position>[]): Promise<ReadonlyMap<string, Position> | undefined | void>;
  /**
   * The next records of any of the splits. May wait for data (or resolve an empty batch), but
   * must settle promptly after `close`. Resolves `null` once every split ended (bounded sources
   * only). Never called again before the previous fetch settled; a rejection fails the subtask
   * (the job restarts from its last checkpoint).
   */
  fetch(): Promise<SplitBatch<T, Position> | null>;
  /**
   * Checkpoint `checkpointId` completed: `positions` are the positions (by split id) it holds,
   * so everything up to them may be acknowledged to the external system. Acknowledge nothing
   * earlier: a restore rewinds to the last completed checkpoint. A returned promise is awaited
   * before the subtask finishes; a rejection fails the subtask.
   */
  notifyCheckpointComplete?(checkpointId: number, positions: ReadonlyMap<string, Position>): Promise<void> | void;
  /** Stops fetching and disconnects; makes a pending `fetch` settle. Errors are ignored. */
  close(): Promise<void> | void;
}

/**
 * A source divided into splits, each with a checkpointed position. Implement this and
 * `createReader() { return new SplitSourceReader(this); }` to get a `Source` for
 * `StreamEnvironment.fromSource`.
 */
export interface SplitSource<T, Split extends SourceSplit, Position> {
  /** Display name of the source operator. */
  readonly name: string;
  /** Whether the splits end by themselves (bounded) or are read until the job is cancelled. */
  readonly bounded: boolean;
  /**
   * The source's splits, called by every subtask at open: from the configuration, or discovered
   * (asking the server which streams exist). Each subtask keeps those `splitOwner` gives it, plus
   * those it restores from state (a restored split is kept even when it is no longer listed).
   */
  enumerateSplits(ctx: RuntimeContext): Promise<readonly Split[]> | readonly Split[];
  /** Where a split that is not in the restored state starts (a new split, or a fresh job). */
  initialPosition(split: Split): Position;
  /** A reader for one subtask and attempt; `ctx` is its runtime context (subtask, uid, run id). */
  createSplitReader(ctx: RuntimeContext): SplitReader<T, Split, Position>;
  /**
   * Records the fetch queue holds before the fetcher stops (backpressure), plus at most one
   * batch. Default 8192.
   */
  readonly queueRecordsMax?: number;
  /** Milliseconds the task waits before polling an empty queue again. Default 2. */
  readonly idlePollMs?: number;
}
