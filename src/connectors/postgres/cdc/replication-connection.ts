/**
 * A walsender connection (`replication=database`) speaking the streaming replication protocol over
 * the `pg` client: create a logical slot exporting a snapshot, stream pgoutput from it, and send
 * standby status updates whose flush position is the only way the slot's confirmed position moves.
 * pg-logical-replication's service is not used because it confirms every received LSN (itself or
 * on a 10 s timer) and cannot be paused from outside; its pgoutput parser is used by the reader.
 */
import type pg from 'pg';
import type { Clock } from '../../../core/time.ts';
import type { ConnectorError } from '../../../core/errors.ts';
import { connect } from '../connection.ts';
import { connectorError, type ResolvedConnection } from '../settings.ts';
import { quoteIdent } from '../sql.ts';
import { formatLsn, laterLsn, parseLsn, readLsn } from './lsn.ts';

/** The parts of the `pg` client's connection the replication protocol needs (not in its type declarations). */
interface WireConnection {
  on(event: 'copyData', listener: (msg: { chunk: Buffer }) => void): void;
  sendCopyFromChunk(chunk: Buffer): void;
  readonly stream: { pause(): void; resume(): void };
}

/** Microseconds between the Unix epoch and PostgreSQL's (2000-01-01). */
const PG_EPOCH_US = 946_684_800_000_000n;

/** What a started stream delivers. */
export interface ReplicationHandlers {
  /** One pgoutput message (the payload of an XLogData message). */
  onMessage(payload: Buffer): void;
  /**
   * A keepalive: the server sent every transaction committed before `walEnd`. Returns whether to
   * answer it, so the server sends the next one as soon as it is idle again (unanswered, it sends
   * the next only when it wants a reply, every half wal_sender_timeout).
   */
  onKeepalive?(walEnd: bigint): boolean;
}

/** One walsender connection; `start` turns it into a stream for good. */
export class ReplicationConnection {
  private streaming = false;
  private closing = false;
  private received = 0n;
  private flushed = 0n;
  private replyWaiters: Array<() => void> = [];

  private constructor(
    private readonly client: pg.Client,
    private readonly c: ResolvedConnection,
    private readonly clock: Clock,
    private readonly onError: (err: ConnectorError) => void,
  ) {}

  /** Connects; a connection lost later reports to `onError` (unless closed by `close`). */
  static async open(c: ResolvedConnection, purpose: string, clock: Clock, onError: (err: ConnectorError) => void): Promise<ReplicationConnection> {
    let self: ReplicationConnection | null = null;
    const client = await connect(c, purpose, (err) => self?.fail(err), { replication: true });
    self = new ReplicationConnection(client, c, clock, onError);
    return self;
  }

  /**
   * Creates logical slot `slot` with the pgoutput plugin, exporting its snapshot: a transaction
   * that imports `snapshotName` (before this connection runs another command) sees exactly the
   * changes committed before `consistentLsn`, and the slot streams exactly those after it. A
   * temporary slot (only its snapshot is wanted) goes when this connection closes.
   */
  async createSlot(slot: string, temporary = false): Promise<{ consistentLsn: bigint; snapshotName: string }> {
    try {
      const res = await this.client.query<{ consistent_point: string; snapshot_name: string }>(
        `CREATE_REPLICATION_SLOT ${quoteIdent(slot)}${temporary ? ' TEMPORARY' : ''} LOGICAL pgoutput EXPORT_SNAPSHOT`,
      );
      const row = res.rows[0]!;
      return { consistentLsn: parseLsn(row.consistent_point), snapshotName: row.snapshot_name };
    } catch (err) {
      throw connectorError(this.c, `creating replication slot ${slot}`, err);
    }
  }

  /** Streams `publication` from `slot`, starting after `fromLsn` (the server starts no earlier than the slot's confirmed position). */
  start(slot: string, publication: string, fromLsn: bigint, handlers: ReplicationHandlers): void {
    this.flushed = fromLsn;
    const wire = this.wire();
    wire.on('copyData', ({ chunk }) => {
      try {
        this.onCopyData(chunk, handlers);
      } catch (err) {
        this.fail(connectorError(this.c, `decoding the stream of slot ${slot}`, err));
      }
    });
    this.streaming = true;
    const options = `proto_version '1', publication_names ${literal(quoteIdent(publication))}`;
    this.client.query(`START_REPLICATION SLOT ${quoteIdent(slot)} LOGICAL ${formatLsn(fromLsn)} (${options})`).then(
      () => this.fail(connectorError(this.c, `streaming slot ${slot}`, new Error('the server ended the stream'))),
      (err: unknown) => this.fail(connectorError(this.c, `streaming slot ${slot}`, err)),
    );
  }

  private onCopyData(chunk: Buffer, handlers: ReplicationHandlers): void {
    const tag = chunk[0];
    if (tag === 0x77) {
      // XLogData: walStart, walEnd, sendTime, then the pgoutput message
      const walEnd = readLsn(chunk, 9);
      if (walEnd > this.received) this.received = walEnd;
      handlers.onMessage(chunk.subarray(25));
    } else if (tag === 0x6b) {
      // Primary keepalive: walEnd, sendTime, reply requested
      const walEnd = readLsn(chunk, 1);
      if (walEnd > this.received) this.received = walEnd;
      const waiters = this.replyWaiters;
      this.replyWaiters = [];
      for (const w of waiters) w();
      const answer = handlers.onKeepalive?.(walEnd) ?? false;
      if (chunk[17] === 1 || answer) this.sendStatus(false);
    }
  }

  /**
   * Confirms `lsn` as flushed: the slot's confirmed position moves there and the server may recycle
   * WAL before it. Resolves once the server answered (so it has applied the update).
   */
  confirm(lsn: bigint): Promise<void> {
    if (lsn > this.flushed) this.flushed = lsn;
    if (!this.streaming || this.closing) return Promise.resolve();
    return new Promise((resolve) => {
      this.replyWaiters.push(resolve);
      this.sendStatus(true);
    });
  }

  /** A standby status update: written = received, flushed = applied = confirmed by a checkpoint. */
  private sendStatus(replyRequested: boolean): void {
    if (this.closing) return;
    const msg = Buffer.allocUnsafe(34);
    msg[0] = 0x72; // 'r'
    msg.writeBigUInt64BE(laterLsn(this.received, this.flushed), 1);
    msg.writeBigUInt64BE(this.flushed, 9);
    msg.writeBigUInt64BE(this.flushed, 17);
    msg.writeBigInt64BE(BigInt(Math.floor(this.clock.now())) * 1000n - PG_EPOCH_US, 25);
    msg[33] = replyRequested ? 1 : 0;
    this.wire().sendCopyFromChunk(msg);
  }

  /** Stops reading from the socket (backpressure); the server stops sending when its buffers fill. */
  pause(): void {
    this.wire().stream.pause();
  }

  resume(): void {
    this.wire().stream.resume();
  }

  /** Runs a plain query on this connection (before `start`). */
  query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> {
    return this.client.query<R>(text);
  }

  private wire(): WireConnection {
    return (this.client as unknown as { connection: WireConnection }).connection;
  }

  private fail(err: ConnectorError): void {
    if (this.closing) return;
    this.closing = true;
    this.releaseWaiters();
    this.client.end().catch(() => {});
    this.onError(err);
  }

  private releaseWaiters(): void {
    const waiters = this.replyWaiters;
    this.replyWaiters = [];
    for (const w of waiters) w();
  }

  /** Ends the connection; the slot becomes inactive and keeps its confirmed position. */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.releaseWaiters();
    this.client.end().catch(() => {});
  }
}

/** A string literal for a replication command option. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
