/**
 * Appends records to Redis streams exactly-once. A subtask keeps a checkpoint epoch's entries in
 * memory; on the barrier they become the committable (so they go into the checkpoint), and when
 * the checkpoint completed they are appended with XADD (auto ids) inside one MULTI/EXEC that also
 * adds the transaction's id to the sink's commit set (commits.ts), watched so that a concurrent or
 * repeated commit of the same transaction writes nothing. After a restore the checkpoint's
 * committables are committed again and skipped where they were already.
 *
 * Why a fenced transaction and not explicit entry ids: XADD only accepts ids above the stream's
 * last id, so ids derived from (checkpoint, sequence) break as soon as two subtasks, two jobs or
 * any other writer share a stream, while the fence works whatever else writes to it.
 * Costs: a checkpoint holds its epoch's entries, and Redis Cluster would need the stream and the
 * commit set in one hash slot (not supported).
 */
import type { Redis } from 'ioredis';
import { ConfigError, type ConnectorError } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../runtime/sink.ts';
import { commitsKey, RETAINED_CHECKPOINT_IDS, transactionId } from './commits.ts';
import { closeRedis, connectRedis } from './connection.ts';
import { type RedisConnectionOptions, type ResolvedRedisConnection, redisError, resolveRedisConnection } from './settings.ts';

/** Where and how a `RedisStreamSink` appends. */
export interface RedisStreamSinkOptions<T> {
  /** The stream key every record goes to, or a function choosing it per record. */
  readonly key: string | ((record: T) => string);
  /** A record's fields, as an object of strings or numbers (default: the record's own properties). */
  readonly toFields?: (record: T) => Record<string, string | number>;
  /** Names the sink's commit set (default: the key when it is a string); give two sinks of one key different ids. */
  readonly id?: string;
  /** Server and credentials; unset fields come from REDIS_URL, REDIS_HOST, REDIS_PORT, REDIS_USERNAME, REDIS_PASSWORD. */
  readonly connection?: RedisConnectionOptions;
}

/** One epoch's entries of one subtask: what goes into the checkpoint. */
export interface RedisStreamCommittable {
  /** The transaction id (commits.ts): subtask, checkpoint and run. */
  readonly txn: string;
  /** The checkpoint whose barrier closed the epoch (the commit set's score). */
  readonly checkpointId: number;
  /** Stream key and flattened fields of each entry, in write order. */
  readonly entries: ReadonlyArray<readonly [string, readonly string[]]>;
}

interface Settings {
  readonly sinkId: string;
  readonly keyOf: (record: unknown) => string;
  readonly toFields: (record: unknown) => Record<string, string | number>;
  readonly connection: ResolvedRedisConnection;
}

/** Transactions retried this often when the commit set changed under the WATCH. */
const WATCH_RETRIES_MAX = 10;

class RedisStreamWriter implements TwoPhaseCommitWriter<unknown, RedisStreamCommittable> {
  private client: Redis | null = null;
  private failure: ConnectorError | null = null;
  private entries: Array<readonly [string, readonly string[]]> = [];
  private subtask = 0;
  private runId = '';
  /** The last commit queued: commits run one at a time. */
  private commits: Promise<void> = Promise.resolve();

  constructor(private readonly s: Settings) {}

  async open(ctx: RuntimeContext): Promise<void> {
    this.subtask = ctx.subtaskIndex;
    this.runId = ctx.runId;
    // Nothing of an uncommitted transaction lives in Redis, so a dead run leaves nothing to abort.
    this.client = await connectRedis(this.s.connection, `sink ${this.s.sinkId} ${ctx.subtaskIndex}`, (err) => {
      this.failure ??= err;
    });
  }

  write(record: unknown): void {
    const fields = this.s.toFields(record);
    const flat: string[] = [];
    for (const name in fields) flat.push(name, String(fields[name]));
    if (flat.length === 0) throw new ConfigError('RedisStreamSink.toFields', 'returned no fields (a stream entry needs at least one)');
    this.entries.push([this.s.keyOf(record), flat]);
  }

  preCommit(checkpointId: number): RedisStreamCommittable | null {
    if (this.entries.length === 0) return null;
    const entries = this.entries;
    this.entries = [];
    return { txn: transactionId(this.subtask, checkpointId, this.runId), checkpointId, entries };
  }

  /**
   * Commits one after another on this writer's connection: WATCH belongs to the connection and
   * EXEC clears it, so two transactions interleaved on one connection would leave the second
   * unwatched (a concurrent repeat of the same commit could then append twice).
   */
  commit(committables: readonly RedisStreamCommittable[]): Promise<void> {
    const run = this.commits.then(async () => {
      for (const c of committables) await this.commitOne(c);
    });
    this.commits = run.catch(() => {});
    return run;
  }

  private async commitOne(c: RedisStreamCommittable): Promise<void> {
    const client = this.client!;
    const set = commitsKey(this.s.sinkId);
    for (let attempt = 0; attempt < WATCH_RETRIES_MAX; attempt++) {
      if (this.failure) throw this.failure;
      try {
        await client.watch(set);
        if ((await client.zscore(set, c.txn)) !== null) {
          await client.unwatch();
          return;
        }
        const multi = client.multi();
        for (const [key, flat] of c.entries) multi.xadd(key, '*', ...flat);
        multi.zadd(set, c.checkpointId, c.txn);
        multi.zremrangebyscore(set, '-inf', `(${c.checkpointId - RETAINED_CHECKPOINT_IDS}`);
        const result = await multi.exec();
        if (result === null) continue; // the set changed under the watch: look again
        const failed = result.find(([err]) => err !== null);
        if (failed) throw failed[0];
        return;
      } catch (err) {
        throw this.failure ?? redisError(this.s.connection, `sink ${this.s.sinkId}, subtask ${this.subtask}: committing ${c.txn}`, err);
      }
    }
    throw redisError(this.s.connection, `sink ${this.s.sinkId}: committing ${c.txn}`, new Error(`the commit set changed ${WATCH_RETRIES_MAX} times in a row`));
  }

  dispose(): void {
    this.entries = [];
    if (this.client) closeRedis(this.client);
    this.client = null;
  }

  close(): void {
    this.dispose();
  }
}

/** Appends records to Redis streams, exactly-once (see the module comment). */
export class RedisStreamSink<T> implements TwoPhaseCommitSink<T, RedisStreamCommittable> {
  /** A two-phase-commit sink. */
  readonly kind = 'two-phase-commit' as const;
  /** Display name of the sink operator. */
  readonly name: string;
  private readonly s: Settings;

  /**
   * A sink appending to `options.key`; the options are checked here.
   * @throws ConfigError naming the option at fault.
   */
  constructor(options: RedisStreamSinkOptions<T>) {
    this.s = settingsOf(options as RedisStreamSinkOptions<unknown>);
    this.name = `redis-sink ${this.s.sinkId}`;
  }

  /** A writer for one subtask and attempt. */
  createWriter(): TwoPhaseCommitWriter<T, RedisStreamCommittable> {
    return new RedisStreamWriter(this.s);
  }

  /** The newest checkpoint this sink committed, from its commit set (null: none). */
  async newestCommitted(): Promise<number | null> {
    const client = await connectRedis(this.s.connection, `sink ${this.s.sinkId} bookkeeping`, () => {});
    try {
      const top = await client.zrange(commitsKey(this.s.sinkId), 0, 0, 'REV', 'WITHSCORES');
      return top.length >= 2 ? Number(top[1]) : null;
    } catch (err) {
      throw redisError(this.s.connection, `sink ${this.s.sinkId}: reading the newest committed checkpoint`, err);
    } finally {
      closeRedis(client);
    }
  }
}

function settingsOf(o: RedisStreamSinkOptions<unknown>): Settings {
  const where = 'RedisStreamSink';
  if (typeof o.key === 'string' ? o.key.length === 0 : typeof o.key !== 'function') throw new ConfigError(`${where}.key`, 'must be a stream key or a function');
  if (typeof o.key !== 'string' && o.id === undefined) throw new ConfigError(`${where}.id`, 'is required when key is a function');
  const sinkId = o.id ?? (o.key as string);
  const key = o.key;
  const keyOf = typeof key === 'string' ? () => key : key;
  const toFields = o.toFields ?? ((record: unknown) => record as Record<string, string | number>);
  let connection: ResolvedRedisConnection;
  try {
    connection = resolveRedisConnection(o.connection);
  } catch (err) {
    throw new ConfigError(`${where}.connection`, (err as Error).message);
  }
  return { sinkId, keyOf, toFields, connection };
}
