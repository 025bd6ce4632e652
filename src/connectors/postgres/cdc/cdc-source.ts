/**
 * The PostgreSQL change-data-capture source: the rows of the captured tables (an initial snapshot)
 * and then every insert, update and delete committed to them, as typed `ChangeRecord`s, exactly
 * once through failures. Written with the public split-source API (src/runtime/split-source.ts),
 * like any user's source: its one split is the replication slot.
 *
 * It reads a logical replication slot with the built-in `pgoutput` plugin (the server needs
 * `wal_level=logical`; .ci/postgres-setup sets it) through a publication of the captured tables.
 * The slot is created exporting its snapshot; the rows are copied in a transaction that imports
 * it, so the copy holds exactly the changes committed before the slot's consistent point and the
 * stream exactly those after. Every change carries the position after it (the last transaction
 * emitted whole, changes emitted of the next one; in the copy, the rows copied and the last key:
 * cdc-position.ts), and the split source checkpoints the position of the last change emitted; the
 * slot's confirmed position moves only when a checkpoint completes, to that checkpoint's position,
 * so the server keeps every change a restore may need. After a restore the reader skips what the
 * checkpoint's position says it emitted.
 *
 * One slot is one ordered stream: the split has ordinal 0, so subtask 0 reads it; run the source
 * at parallelism 1 (other subtasks own no split and emit nothing). The slot and publication are
 * named `weir_cdc_<id>`; a slot retains WAL on the server until it is dropped, so after retiring a
 * job drop both: `weir cdc drop-slot weir_cdc_<id>` (or `SELECT pg_drop_replication_slot(...)` and
 * `DROP PUBLICATION ...`); `weir run` warns of them when a job with this source ends.
 * A job started without a checkpoint drops and recreates its slot (nothing downstream depends on
 * it yet).
 *
 * The copy reads each table in primary-key order and checkpoints the last key emitted. A restore
 * inside the copy reads the remaining rows from a new snapshot (a temporary slot's) and skips the
 * streamed changes of those rows up to that snapshot's LSN; this needs a primary key of integer,
 * text, varchar or uuid columns (other tables are copied in storage order, and a restore inside
 * their copy fails with a RestoreError). Creating a slot waits until every transaction running
 * on the server has ended (prepared ones too), so the setup runs after `open`, and the source
 * emits once it is done.
 *
 * Checkpoints written before the source was a split source hold the position in the operator
 * state `postgres-cdc-position` (format 1): a restore from one converts it (cdc-position-v1.ts).
 */
import type { RuntimeContext } from '../../../runtime/functions.ts';
import type { Source, SourceReader } from '../../../runtime/source.ts';
import type { SplitReader } from '../../../runtime/split-source.ts';
import { SplitSourceReader } from '../../../runtime/split-source-reader.ts';
import { describeServer } from '../settings.ts';
import { slotNameOf } from './cdc-names.ts';
import { type CdcPosition, START_POSITION } from './cdc-position.ts';
import { type CdcSplit, PostgresCdcSplitReader } from './cdc-reader.ts';
import { type CdcSettings, cdcSettingsOf, type PostgresCdcSourceOptions } from './cdc-settings.ts';
import { SLOT_SPLIT_ID } from './change-batches.ts';
import type { ChangeRecord } from './change-record.ts';

const SLOT_SPLIT: CdcSplit = Object.freeze({ id: SLOT_SPLIT_ID, ordinal: 0 });

/**
 * Captures the changes of PostgreSQL tables (see the module comment). A `SplitSource` with one
 * split, the replication slot; its split-source methods are called by the runtime only.
 */
export class PostgresCdcSource implements Source<ChangeRecord> {
  /** Display name of the source operator. */
  readonly name: string;
  /** Bounded only with `endWhen`. */
  readonly bounded: boolean;
  /** Changes the fetch queue holds (half of `bufferChanges`; the reader's intake holds the other half). */
  readonly queueRecordsMax: number;
  /** `idleWaitMs`. */
  readonly idlePollMs: number;
  private readonly settings: CdcSettings;
  private readonly intakeChanges: number;

  /**
   * A source capturing `options.tables`; the options are checked here.
   * @throws ConfigError naming the option at fault.
   */
  constructor(options: PostgresCdcSourceOptions) {
    this.settings = cdcSettingsOf(options);
    this.bounded = this.settings.endWhen !== null;
    this.name = `postgres-cdc ${this.settings.tables.map((t) => `${t.schema}.${t.table}`).join(',')}`;
    this.queueRecordsMax = Math.max(1, Math.floor(this.settings.bufferChanges / 2));
    this.intakeChanges = Math.max(1, this.settings.bufferChanges - this.queueRecordsMax);
    this.idlePollMs = this.settings.idleWaitMs;
  }

  /**
   * The one split, the replication slot (ordinal 0: subtask 0 reads it).
   * @internal called by the split-source runtime
   */
  enumerateSplits(): readonly CdcSplit[] {
    return [SLOT_SPLIT];
  }

  /**
   * No slot yet: the reader creates it (or, restoring a checkpoint of format 1, converts its position).
   * @internal called by the split-source runtime
   */
  initialPosition(): CdcPosition {
    return START_POSITION;
  }

  /**
   * A split reader for subtask 0 and one attempt.
   * @internal called by the split-source runtime
   */
  createSplitReader(ctx: RuntimeContext): SplitReader<ChangeRecord, CdcSplit, CdcPosition> {
    return new PostgresCdcSplitReader(this.settings, ctx, this.intakeChanges);
  }

  /** The slot and publication stay on the server, holding WAL, until dropped: how to drop them. */
  leftBehind(uid: string): readonly string[] {
    const name = slotNameOf(this.settings.id ?? uid);
    return [
      `replication slot ${name} and publication ${name} stay on ${describeServer(this.settings.connection)} and keep its WAL from being recycled; ` +
        `if this job will not be resumed, drop them: weir cdc drop-slot ${name}`,
    ];
  }

  /** What `StreamEnvironment.fromSource` runs. */
  createReader(): SourceReader<ChangeRecord> {
    return new SplitSourceReader(this);
  }
}
