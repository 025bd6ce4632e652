/**
 * Publishes records to NATS JetStream exactly-once within the stream's duplicate window. A
 * subtask keeps a checkpoint epoch's messages in memory; on the barrier they become the
 * committable (so they go into the checkpoint), each with a message id
 * `<uid>/<subtask>/<checkpoint>/<run id>/<sequence>`, and when the checkpoint completed they are
 * published with that id in the `Nats-Msg-Id` header. A commit repeated after a restore publishes
 * the same messages with the same ids, and the stream drops them as duplicates.
 *
 * The guarantee holds within the stream's `duplicate_window` (JetStream's default: 2 minutes):
 * a commit repeated later than that after the first one — a job restored from a checkpoint whose
 * commit happened longer ago, or a commit that failed and is retried only after the window — is
 * published again (duplicates). Size the window above the longest restart plus commit time you
 * accept. The run id in every message id makes ids unique across runs and jobs, and the
 * committable carries the ids themselves, so a replay never mints new ones. Why publish on commit
 * and not on the barrier: messages published before the checkpoint completes would stay visible
 * if it never completes, and the records replayed after the restore could differ.
 */
import { jetstream, type PubAck } from '@nats-io/jetstream';
import { ConfigError, type ConnectorError } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';
import { connectNats, type NatsLink } from './connection.ts';
import { type NatsConnectionOptions, natsError, type ResolvedNatsConnection, resolveNatsConnection } from './settings.ts';

/** Where and how a `JetStreamSink` publishes. */
export interface JetStreamSinkOptions<T> {
  /** The subject every record is published to, or a function choosing it per record; a stream must capture it. */
  readonly subject: string | ((record: T) => string);
  /** A record's payload (default: UTF-8 JSON of the record; a string is sent as UTF-8 as it is). */
  readonly toData?: (record: T) => Uint8Array | string;
  /** Publishes awaiting their acknowledgement at once, per subtask (default 256). */
  readonly publishesInFlightMax?: number;
  /** Server and credentials; unset fields come from NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TOKEN. */
  readonly connection?: NatsConnectionOptions;
}

/** One epoch's messages of one subtask: what goes into the checkpoint. */
export interface JetStreamCommittable {
  /** Message ids are this prefix and the message's index in the epoch. */
  readonly idPrefix: string;
  /** Each message's subject. */
  readonly subjects: readonly string[];
  /** Each message's payload. */
  readonly payloads: readonly Uint8Array[];
}

interface Settings {
  readonly subjectOf: (record: unknown) => string;
  readonly toData: (record: unknown) => Uint8Array;
  readonly inFlightMax: number;
  readonly connection: ResolvedNatsConnection;
  readonly label: string;
}

/** How many messages a commit published and how many the stream dropped as duplicates (for tests and metrics). */
export interface JetStreamCommitCounts {
  /** Messages published (and acknowledged by the stream). */
  published: number;
  /** Of those, the ones the stream dropped as duplicates of an id it had already stored. */
  duplicates: number;
}

const encoder = new TextEncoder();

class JetStreamWriter implements TwoPhaseCommitWriter<unknown, JetStreamCommittable> {
  private link: NatsLink | null = null;
  private failure: ConnectorError | null = null;
  private subjects: string[] = [];
  private payloads: Uint8Array[] = [];
  private subtask = 0;
  private uid = '';
  private runId = '';

  constructor(
    private readonly s: Settings,
    private readonly counts: JetStreamCommitCounts,
  ) {}

  async open(ctx: RuntimeContext): Promise<void> {
    this.subtask = ctx.subtaskIndex;
    this.uid = ctx.uid;
    this.runId = ctx.runId;
    // Nothing of an uncommitted epoch lives on the server, so a dead run leaves nothing to abort.
    this.link = await connectNats(this.s.connection, `sink ${ctx.uid} ${ctx.subtaskIndex}`, (err) => {
      this.failure ??= err;
    });
  }

  write(record: unknown): void {
    this.subjects.push(this.s.subjectOf(record));
    this.payloads.push(this.s.toData(record));
  }

  preCommit(checkpointId: number): JetStreamCommittable | null {
    if (this.subjects.length === 0) return null;
    const c = { idPrefix: `${this.uid}/${this.subtask}/${checkpointId}/${this.runId}/`, subjects: this.subjects, payloads: this.payloads };
    this.subjects = [];
    this.payloads = [];
    return c;
  }

  async commit(committables: readonly JetStreamCommittable[]): Promise<void> {
    for (const c of committables) await this.publishAll(c);
  }

  /** Publishes with at most `inFlightMax` acknowledgements outstanding; every message must be acknowledged. */
  private async publishAll(c: JetStreamCommittable): Promise<void> {
    if (this.failure) throw this.failure;
    const js = jetstream(this.link!.nc);
    const inFlight = new Set<Promise<void>>();
    let error: unknown = null;
    const settle = (ack: PubAck): void => {
      this.counts.published++;
      if (ack.duplicate) this.counts.duplicates++;
    };
    for (let i = 0; i < c.subjects.length && error === null; i++) {
      const p: Promise<void> = js
        .publish(c.subjects[i]!, c.payloads[i]!, { msgID: `${c.idPrefix}${i}` })
        .then(settle, (err: unknown) => {
          error ??= err;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= this.s.inFlightMax) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (error !== null) throw this.failure ?? natsError(this.s.connection, `${this.s.label}, subtask ${this.subtask}: publishing ${c.idPrefix}*`, error);
  }

  dispose(): void {
    this.subjects = [];
    this.payloads = [];
    this.link?.close();
    this.link = null;
  }

  close(): void {
    this.dispose();
  }
}

/** Publishes records to JetStream with message-id deduplication (see the module comment). */
export class JetStreamSink<T> implements TwoPhaseCommitSink<T, JetStreamCommittable> {
  /** A two-phase-commit sink. */
  readonly kind = 'two-phase-commit' as const;
  /** Display name of the sink operator. */
  readonly name: string;
  /** Messages published by this process's commits, and how many of them the stream dropped as duplicates. */
  readonly counts: JetStreamCommitCounts = { published: 0, duplicates: 0 };
  private readonly s: Settings;

  /**
   * A sink publishing to `options.subject`; the options are checked here.
   * @throws ConfigError naming the option at fault.
   */
  constructor(options: JetStreamSinkOptions<T>) {
    this.s = settingsOf(options as JetStreamSinkOptions<unknown>);
    this.name = this.s.label;
  }

  /** A writer for one subtask and attempt. */
  createWriter(): TwoPhaseCommitWriter<T, JetStreamCommittable> {
    return new JetStreamWriter(this.s, this.counts);
  }
}

function settingsOf(o: JetStreamSinkOptions<unknown>): Settings {
  const where = 'JetStreamSink';
  if (typeof o.subject === 'string' ? !/^[^\s*>]+$/.test(o.subject) : typeof o.subject !== 'function')
    throw new ConfigError(`${where}.subject`, 'must be a subject without wildcards, or a function');
  const subject = o.subject;
  const subjectOf = typeof subject === 'string' ? () => subject : subject;
  const toData = o.toData;
  const encode = (record: unknown): Uint8Array => {
    const data = toData ? toData(record) : JSON.stringify(record);
    return typeof data === 'string' ? encoder.encode(data) : data;
  };
  const inFlightMax = o.publishesInFlightMax ?? 256;
  if (!Number.isInteger(inFlightMax) || inFlightMax < 1) throw new ConfigError(`${where}.publishesInFlightMax`, `must be an integer >= 1, got ${inFlightMax}`);
  let connection: ResolvedNatsConnection;
  try {
    connection = resolveNatsConnection(o.connection);
  } catch (err) {
    throw new ConfigError(`${where}.connection`, (err as Error).message);
  }
  return { subjectOf, toData: encode, inFlightMax, connection, label: `jetstream-sink ${typeof subject === 'string' ? subject : 'by record'}` };
}
