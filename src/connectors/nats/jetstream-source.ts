/**
 * Reads a NATS JetStream stream exactly-once by stream sequence. Each split is the stream, or one
 * subject filter of it; its position is the stream sequence of the last message read, kept in
 * operator state. A subtask reads each of its splits with its own ephemeral pull consumer (no acks,
 * so in stream order and never redelivered; started at the checkpointed sequence + 1; removed on
 * close or by the server once inactive), so after a restore reading resumes exactly after the
 * checkpoint. It works with servers from 2.9 (a single `filter_subject`; nats.js's ordered
 * consumers need 2.10 for theirs). Written with the public split-source API, like a user's source.
 *
 * Why ordered consumption and not a durable consumer per split acknowledged on checkpoint
 * completion: the checkpoint alone says where to resume, so a restore to any retained checkpoint
 * or savepoint rewinds exactly (a durable consumer's ack floor only moves forward, and acks beyond
 * an older checkpoint cannot be taken back), nothing is left on the server to clean up when a job
 * is dropped or rescaled, and several jobs read one stream independently. The cost: the stream's
 * retention (limits or interest with other consumers) must keep messages at least as long as a
 * checkpoint may be restored; work-queue streams, which delete on ack, are not supported.
 */
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { ConsumerMessages } from '@nats-io/jetstream';
import { ConfigError, type ConnectorError } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { SourceReader } from '../../runtime/source.ts';
import type { SourceSplit, SplitAssignment, SplitBatch, SplitReader, SplitSource } from '../../runtime/split-source.ts';
import { SplitSourceReader } from '../../runtime/split-source-reader.ts';
import { connectNats, type NatsLink } from './connection.ts';
import { type NatsConnectionOptions, natsError, type ResolvedNatsConnection, resolveNatsConnection } from './settings.ts';

/** One JetStream message as the source emits it (unless `decode` maps it). */
export interface JetStreamRecord {
  /** The message's subject. */
  readonly subject: string;
  /** Its sequence in the stream. */
  readonly sequence: number;
  /** Its payload. */
  readonly data: Uint8Array;
  /** When the stream stored it, milliseconds since the epoch. */
  readonly timestampMs: number;
}

/** What a `JetStreamSource` reads. */
export interface JetStreamSourceOptions<T> {
  /** The stream's name. */
  readonly stream: string;
  /** Subject filters, each a split (dealt round-robin to subtasks); default: the whole stream, one split. */
  readonly subjects?: readonly string[];
  /**
   * Instead of `subjects`: a subject filter with wildcards (`orders.*`); the stream's subjects that
   * match it and hold messages when a subtask opens are the splits, one per subject (placed by a
   * hash of the subject, so subtasks agree without talking).
   */
  readonly discoverSubjects?: string;
  /** Messages a consumer pulls at a time (default 1000). */
  readonly batchMessages?: number;
  /** Maps a message to the record emitted (default: the `JetStreamRecord`). */
  readonly decode?: (record: JetStreamRecord) => T;
  /** Server and credentials; unset fields come from NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TOKEN. */
  readonly connection?: NatsConnectionOptions;
  /** Display name (default `jetstream-source`). */
  readonly name?: string;
}

/** A stream, or one subject filter of it, as a split. */
export interface JetStreamSplit extends SourceSplit {
  /** The stream's name. */
  readonly stream: string;
  /** The subject filter, or null for the whole stream. */
  readonly subject: string | null;
}

/** A consumer left behind by a dead reader is removed by the server after this long without a pull. */
const CONSUMER_INACTIVE_MS = 60_000;

interface Settings {
  readonly stream: string;
  readonly subjects: readonly string[] | null;
  readonly discoverSubjects: string | null;
  readonly batchMessages: number;
  readonly decode: (record: JetStreamRecord) => unknown;
  readonly connection: ResolvedNatsConnection;
}

/** One split's messages received and not yet fetched; the pump pauses at `batchMessages`. */
interface SplitFeed {
  readonly id: string;
  readonly messages: JsMsg[];
  resume: (() => void) | null;
  iterator: ConsumerMessages | null;
}

class JetStreamReader implements SplitReader<unknown, JetStreamSplit, number> {
  private link: NatsLink | null = null;
  private failure: ConnectorError | null = null;
  private feeds: SplitFeed[] = [];
  /** Consumers this reader created, deleted on close (the server drops them anyway once inactive). */
  private readonly consumerNames: Array<[string, string]> = [];
  private cursor = 0;
  private wake: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly s: Settings,
    private readonly purpose: string,
  ) {}

  async open(splits: readonly SplitAssignment<JetStreamSplit, number>[]): Promise<void> {
    this.link = await connectNats(this.s.connection, this.purpose, (err) => this.fail(err));
    const js = jetstream(this.link.nc);
    const jsm = await jetstreamManager(this.link.nc);
    for (const { split, position } of splits) {
      const feed: SplitFeed = { id: split.id, messages: [], resume: null, iterator: null };
      this.feeds.push(feed);
      try {
        const info = await jsm.consumers.add(split.stream, {
          ack_policy: AckPolicy.None,
          ...(position > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: position + 1 } : { deliver_policy: DeliverPolicy.All }),
          ...(split.subject === null ? {} : { filter_subject: split.subject }),
          inactive_threshold: CONSUMER_INACTIVE_MS * 1_000_000,
          mem_storage: true,
          num_replicas: 1,
        });
        this.consumerNames.push([split.stream, info.name]);
        const consumer = await js.consumers.get(split.stream, info.name);
        feed.iterator = await consumer.consume({ max_messages: this.s.batchMessages });
      } catch (err) {
        throw natsError(this.s.connection, `source: creating a consumer on stream ${split.stream} (split ${split.id})`, err);
      }
      void this.pump(feed);
    }
  }

  private async pump(feed: SplitFeed): Promise<void> {
    try {
      for await (const m of feed.iterator!) {
        feed.messages.push(m);
        this.signal();
        if (feed.messages.length >= this.s.batchMessages) await new Promise<void>((r) => (feed.resume = r));
        if (this.closed) return;
      }
      if (!this.closed) this.fail(natsError(this.s.connection, `source: consumer of split ${feed.id}`, new Error('stopped delivering')));
    } catch (err) {
      if (!this.closed) this.fail(natsError(this.s.connection, `source: consumer of split ${feed.id}`, err));
    }
  }

  private fail(err: ConnectorError): void {
    this.failure ??= err;
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async fetch(): Promise<SplitBatch<unknown, number> | null> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.closed) return null;
      for (let n = 0; n < this.feeds.length; n++) {
        const feed = this.feeds[this.cursor++ % this.feeds.length]!;
        if (feed.messages.length > 0) return this.batchOf(feed);
      }
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  private batchOf(feed: SplitFeed): SplitBatch<unknown, number> {
    const messages = feed.messages.splice(0, feed.messages.length);
    const resume = feed.resume;
    feed.resume = null;
    resume?.();
    const records: unknown[] = new Array(messages.length);
    const positions: number[] = new Array(messages.length);
    const decode = this.s.decode;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      records[i] = decode({ subject: m.subject, sequence: m.seq, data: m.data, timestampMs: Math.floor(m.info.timestampNanos / 1e6) });
      positions[i] = m.seq;
    }
    return { splitId: feed.id, records, positions };
  }

  close(): void {
    this.closed = true;
    for (const feed of this.feeds) {
      feed.iterator?.stop();
      feed.resume?.();
    }
    this.signal();
    const link = this.link;
    this.link = null;
    if (link === null) return;
    void jetstreamManager(link.nc)
      .then((jsm) => Promise.all(this.consumerNames.map(([stream, name]) => jsm.consumers.delete(stream, name))))
      .catch(() => {})
      .finally(() => link.close());
  }
}

/** Reads a JetStream stream with the stream sequence per split checkpointed (see the module comment). */
export class JetStreamSource<T = JetStreamRecord> implements SplitSource<T, JetStreamSplit, number> {
  /** Display name of the source operator. */
  readonly name: string;
  /** Unbounded: the stream is read until the job stops. */
  readonly bounded = false;
  private readonly s: Settings;

  /**
   * A source over `options.stream`; the options are checked here.
   * @throws ConfigError naming the option at fault.
   */
  constructor(options: JetStreamSourceOptions<T>) {
    this.s = settingsOf(options as JetStreamSourceOptions<unknown>);
    this.name = options.name ?? 'jetstream-source';
  }

  /** One split per subject filter, per discovered subject, or the whole stream. */
  async enumerateSplits(ctx: RuntimeContext): Promise<JetStreamSplit[]> {
    const { stream, subjects, discoverSubjects } = this.s;
    if (discoverSubjects !== null) return (await this.discover(ctx, discoverSubjects)).map((subject) => ({ id: `${stream}/${subject}`, stream, subject }));
    if (subjects === null) return [{ id: stream, ordinal: 0, stream, subject: null }];
    return subjects.map((subject, ordinal) => ({ id: `${stream}/${subject}`, ordinal, stream, subject }));
  }

  private async discover(ctx: RuntimeContext, filter: string): Promise<string[]> {
    const link = await connectNats(this.s.connection, `source discovery ${ctx.uid} ${ctx.subtaskIndex}`, () => {});
    try {
      const jsm = await jetstreamManager(link.nc);
      const info = await jsm.streams.info(this.s.stream, { subjects_filter: filter });
      return Object.keys(info.state.subjects ?? {}).sort();
    } catch (err) {
      throw natsError(this.s.connection, `source: discovering subjects matching ${filter} in stream ${this.s.stream}`, err);
    } finally {
      link.close();
    }
  }

  /** Sequence 0: before the stream's first message. */
  initialPosition(): number {
    return 0;
  }

  /** A reader for one subtask. */
  createSplitReader(ctx: RuntimeContext): SplitReader<T, JetStreamSplit, number> {
    return new JetStreamReader(this.s, `source ${ctx.uid} ${ctx.subtaskIndex}`) as SplitReader<T, JetStreamSplit, number>;
  }

  /** What `StreamEnvironment.fromSource` runs. */
  createReader(): SourceReader<T> {
    return new SplitSourceReader(this);
  }
}

function settingsOf(o: JetStreamSourceOptions<unknown>): Settings {
  const where = 'JetStreamSource';
  if (typeof o.stream !== 'string' || !/^[^\s.*>]+$/.test(o.stream))
    throw new ConfigError(`${where}.stream`, `must be a stream name, got ${JSON.stringify(o.stream)}`);
  if (o.subjects !== undefined && o.discoverSubjects !== undefined)
    throw new ConfigError(`${where}.discoverSubjects`, 'give either subjects or discoverSubjects');
  if (o.discoverSubjects !== undefined && (typeof o.discoverSubjects !== 'string' || o.discoverSubjects.length === 0))
    throw new ConfigError(`${where}.discoverSubjects`, 'must be a subject filter');
  if (o.subjects !== undefined) {
    if (o.subjects.length === 0 || o.subjects.some((s) => typeof s !== 'string' || s.length === 0))
      throw new ConfigError(`${where}.subjects`, 'must list non-empty subjects');
    if (new Set(o.subjects).size !== o.subjects.length) throw new ConfigError(`${where}.subjects`, 'lists a subject twice');
  }
  const batchMessages = o.batchMessages ?? 1000;
  if (!Number.isInteger(batchMessages) || batchMessages < 1) throw new ConfigError(`${where}.batchMessages`, `must be an integer >= 1, got ${batchMessages}`);
  let connection: ResolvedNatsConnection;
  try {
    connection = resolveNatsConnection(o.connection);
  } catch (err) {
    throw new ConfigError(`${where}.connection`, (err as Error).message);
  }
  return {
    stream: o.stream,
    subjects: o.subjects ?? null,
    discoverSubjects: o.discoverSubjects ?? null,
    batchMessages,
    decode: o.decode ?? ((r) => r),
    connection,
  };
}
