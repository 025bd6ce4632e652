/**
 * The PostgreSQL change-data-capture source: the rows of the captured tables (an initial snapshot)
 * and then every insert, update and delete committed to them, as typed `ChangeRecord`s, exactly
 * once through failures. Written against the public source API like any user's source.
 *
 * It reads a logical replication slot with the built-in `pgoutput` plugin (the server needs
 * `wal_level=logical`; .ci/postgres-setup sets it) through a publication of the captured tables.
 * The slot is created exporting its snapshot; the rows are copied in a transaction that imports
 * it, so the copy holds exactly the changes committed before the slot's consistent point and the
 * stream exactly those after. The position (last transaction emitted whole, changes emitted of
 * the next one) is operator state; the slot's confirmed position moves only when a checkpoint
 * completes, to that checkpoint's position, so the server keeps every change a restore may need.
 * After a restore the reader skips what the checkpoint's position says it emitted.
 *
 * One slot is one ordered stream, read by subtask 0; run the source at parallelism 1 (other
 * subtasks emit nothing). The slot and publication are named `weir_cdc_<id>`; a slot retains WAL
 * on the server until it is dropped, so after retiring a job drop both:
 * `SELECT pg_drop_replication_slot('weir_cdc_<id>'); DROP PUBLICATION weir_cdc_<id>;`.
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
 */
import type { Source, SourceReader } from '../../../runtime/source.ts';
import { PostgresCdcReader } from './cdc-reader.ts';
import { type CdcSettings, cdcSettingsOf, type PostgresCdcSourceOptions } from './cdc-settings.ts';
import type { ChangeRecord } from './change-record.ts';

/** Captures the changes of PostgreSQL tables (see the module comment). */
export class PostgresCdcSource implements Source<ChangeRecord> {
  /** Display name of the source operator. */
  readonly name: string;
  /** Bounded only with `endWhen`. */
  readonly bounded: boolean;
  private readonly settings: CdcSettings;

  /**
   * A source capturing `options.tables`; the options are checked here.
   * @throws ConfigError naming the option at fault.
   */
  constructor(options: PostgresCdcSourceOptions) {
    this.settings = cdcSettingsOf(options);
    this.bounded = this.settings.endWhen !== null;
    this.name = `postgres-cdc ${this.settings.tables.map((t) => `${t.schema}.${t.table}`).join(',')}`;
  }

  /** A reader for one subtask and attempt. */
  createReader(): SourceReader<ChangeRecord> {
    return new PostgresCdcReader(this.settings);
  }
}
