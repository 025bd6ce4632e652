/**
 * Reads Redis streams: each stream key is a split whose position is the id of the last entry
 * read, kept in operator state; a subtask reads all its keys with one blocking XREAD, so after a
 * restore reading resumes after the checkpointed ids (nothing lost, nothing twice). Keys are
 * listed in the options (dealt round-robin) or discovered at open with SCAN (placed by hash).
 * Written with the public split-source API (src/runtime/split-source.ts), like a user's source.
 * Entries are only read, never acknowledged or deleted: trimming the streams is the owner's
 * business (keep entries at least as long as a checkpoint may be restored).
 */
import type { Redis } from 'ioredis';
import { ConfigError, type ConnectorError } from '../../core/errors.ts';
import type { RuntimeContext } from '../../runtime/functions.ts';
import type { SourceReader } from '../../runtime/source.ts';
import type { SourceSplit, SplitAssignment, SplitBatch, SplitReader, SplitSource } from '../../runtime/split-source.ts';
import { SplitSourceReader } from '../../runtime/split-source-reader.ts';
import { closeRedis, connectRedis } from './connection.ts';
import { type RedisConnectionOptions, type ResolvedRedisConnection, redisError, resolveRedisConnection } from './settings.ts';

/** One entry of a Redis stream as the source emits it (unless `decode` maps it). */
export interface RedisStreamEntry {
  /** The stream key. */
  readonly key: string;
  /** The entry id (`<ms>-<seq>`). */
  readonly id: string;
  /** The entry's fields and values. */
  readonly fields: Record<string, string>;
}

/** What a `RedisStreamSource` reads. */
export interface RedisStreamSourceOptions<T> {
  /** Stream keys to read, each a split (dealt round-robin to subtasks). Give this or `pattern`. */
  readonly keys?: readonly string[];
  /** A SCAN pattern (`orders:*`): the streams matching it at open are the splits (placed by hash of the key). */
  readonly pattern?: string;
  /** Where a key not in the checkpoint starts: its first entry (`earliest`, default) or entries added after the open (`latest`). */
  readonly startFrom?: 'earliest' | 'latest';
  /** Entries per XREAD (default 1000). */
  readonly batchEntries?: number;
  /** Milliseconds an XREAD blocks waiting for entries (default 1000). */
  readonly blockMs?: number;
  /** Maps an entry to the record emitted (default: the entry itself). */
  readonly decode?: (entry: RedisStreamEntry) => T;
  /** Server and credentials; unset fields come from REDIS_URL, REDIS_HOST, REDIS_PORT, REDIS_USERNAME, REDIS_PASSWORD. */
  readonly connection?: RedisConnectionOptions;
  /** Display name (default `redis-source`). */
  readonly name?: string;
}

/** A stream key as a split. */
export interface RedisStreamSplit extends SourceSplit {
  /** The stream key (also the split's id). */
  readonly key: string;
}

/** Position of a key with `startFrom: 'latest'` until the open resolves it to a concrete id. */
const LATEST = '$';

interface Settings {
  readonly keys: readonly string[] | undefined;
  readonly pattern: string | undefined;
  readonly startFrom: 'earliest' | 'latest';
  readonly batchEntries: number;
  readonly blockMs: number;
  readonly decode: (entry: RedisStreamEntry) => unknown;
  readonly connection: ResolvedRedisConnection;
}

type XReadReply = Array<[string, Array<[string, string[]]>]> | null;

class RedisStreamReader implements SplitReader<unknown, RedisStreamSplit, string> {
  private client: Redis | null = null;
  private failure: ConnectorError | null = null;
  private keys: string[] = [];
  private ids: string[] = [];
  /** Batches of one XREAD reply not yet returned (a reply may cover several keys). */
  private readonly ready: SplitBatch<unknown, string>[] = [];
  private closed = false;

  constructor(
    private readonly s: Settings,
    private readonly purpose: string,
  ) {}

  async open(splits: readonly SplitAssignment<RedisStreamSplit, string>[]): Promise<ReadonlyMap<string, string>> {
    this.client = await connectRedis(this.s.connection, this.purpose, (err) => {
      this.failure ??= err;
    });
    this.keys = splits.map((s) => s.split.key);
    this.ids = splits.map((s) => s.position);
    const pinned = new Map<string, string>();
    for (let i = 0; i < this.ids.length; i++) {
      if (this.ids[i] !== LATEST) continue;
      const last = await this.command('reading the last entry id', (c) => c.xrevrange(this.keys[i]!, '+', '-', 'COUNT', 1));
      const id = last[0]?.[0] ?? '0-0';
      this.ids[i] = id;
      pinned.set(this.keys[i]!, id);
    }
    return pinned;
  }

  async fetch(): Promise<SplitBatch<unknown, string> | null> {
    const next = this.ready.shift();
    if (next !== undefined) return next;
    const reply = (await this.command('reading entries (XREAD)', (c) =>
      c.xread('COUNT', this.s.batchEntries, 'BLOCK', this.s.blockMs, 'STREAMS', ...this.keys, ...this.ids),
    )) as XReadReply;
    if (reply === null || this.closed) return { splitId: this.keys[0]!, records: [], positions: [] };
    for (const [key, entries] of reply) this.ready.push(this.batchOf(key, entries));
    return this.ready.shift() ?? { splitId: this.keys[0]!, records: [], positions: [] };
  }

  private batchOf(key: string, entries: Array<[string, string[]]>): SplitBatch<unknown, string> {
    const records: unknown[] = new Array(entries.length);
    const positions: string[] = new Array(entries.length);
    const decode = this.s.decode;
    for (let i = 0; i < entries.length; i++) {
      const [id, flat] = entries[i]!;
      const fields: Record<string, string> = {};
      for (let f = 0; f + 1 < flat.length; f += 2) fields[flat[f]!] = flat[f + 1]!;
      records[i] = decode({ key, id, fields });
      positions[i] = id;
    }
    const index = this.keys.indexOf(key);
    if (index >= 0 && entries.length > 0) this.ids[index] = positions[entries.length - 1]!;
    return { splitId: key, records, positions };
  }

  private async command<R>(what: string, run: (client: Redis) => Promise<R>): Promise<R> {
    if (this.failure) throw this.failure;
    try {
      return await run(this.client!);
    } catch (err) {
      throw this.failure ?? redisError(this.s.connection, `source: ${what}`, err);
    }
  }

  close(): void {
    this.closed = true;
    if (this.client) closeRedis(this.client);
    this.client = null;
  }
}

/** Reads Redis streams with the last entry id per key checkpointed (see the module comment). */
export class RedisStreamSource<T = RedisStreamEntry> implements SplitSource<T, RedisStreamSplit, string> {
  /** Display name of the source operator. */
  readonly name: string;
  /** Unbounded: streams are read until the job stops. */
  readonly bounded = false;
  private readonly s: Settings;

  /**
   * A source over the streams `options` names; the options are checked here.
   * @throws ConfigError naming the option at fault.
   */
  constructor(options: RedisStreamSourceOptions<T>) {
    this.s = settingsOf(options as RedisStreamSourceOptions<unknown>);
    this.name = options.name ?? 'redis-source';
  }

  /** The configured keys, or the stream keys matching the pattern now. */
  async enumerateSplits(ctx: RuntimeContext): Promise<RedisStreamSplit[]> {
    if (this.s.keys !== undefined) return this.s.keys.map((key, ordinal) => ({ id: key, ordinal, key }));
    const client = await connectRedis(this.s.connection, `source discovery ${ctx.uid}`, () => {});
    try {
      const keys = new Set<string>();
      let cursor = '0';
      do {
        const [next, found] = await client.scan(cursor, 'MATCH', this.s.pattern!, 'COUNT', 1000, 'TYPE', 'stream');
        for (const k of found) keys.add(k);
        cursor = next;
      } while (cursor !== '0');
      return [...keys].sort().map((key) => ({ id: key, key }));
    } catch (err) {
      throw redisError(this.s.connection, `source: discovering streams matching ${this.s.pattern}`, err);
    } finally {
      closeRedis(client);
    }
  }

  /** `0-0` (before the first entry) or, with `startFrom: 'latest'`, the last id at open. */
  initialPosition(): string {
    return this.s.startFrom === 'earliest' ? '0-0' : LATEST;
  }

  /** A reader for one subtask. */
  createSplitReader(ctx: RuntimeContext): SplitReader<T, RedisStreamSplit, string> {
    return new RedisStreamReader(this.s, `source ${ctx.uid} ${ctx.subtaskIndex}`) as SplitReader<T, RedisStreamSplit, string>;
  }

  /** What `StreamEnvironment.fromSource` runs. */
  createReader(): SourceReader<T> {
    return new SplitSourceReader(this);
  }
}

function settingsOf(o: RedisStreamSourceOptions<unknown>): Settings {
  const where = 'RedisStreamSource';
  if ((o.keys === undefined) === (o.pattern === undefined)) throw new ConfigError(`${where}.keys`, 'give either keys or pattern');
  if (o.keys !== undefined) {
    if (o.keys.length === 0 || o.keys.some((k) => typeof k !== 'string' || k.length === 0)) throw new ConfigError(`${where}.keys`, 'must list non-empty keys');
    if (new Set(o.keys).size !== o.keys.length) throw new ConfigError(`${where}.keys`, 'lists a key twice');
  }
  if (o.pattern !== undefined && (typeof o.pattern !== 'string' || o.pattern.length === 0)) throw new ConfigError(`${where}.pattern`, 'must be a SCAN pattern');
  const startFrom = o.startFrom ?? 'earliest';
  if (startFrom !== 'earliest' && startFrom !== 'latest')
    throw new ConfigError(`${where}.startFrom`, `'${String(startFrom)}' is neither 'earliest' nor 'latest'`);
  const batchEntries = o.batchEntries ?? 1000;
  if (!Number.isInteger(batchEntries) || batchEntries < 1) throw new ConfigError(`${where}.batchEntries`, `must be an integer >= 1, got ${batchEntries}`);
  const blockMs = o.blockMs ?? 1000;
  if (!Number.isInteger(blockMs) || blockMs < 1) throw new ConfigError(`${where}.blockMs`, `must be an integer >= 1, got ${blockMs}`);
  let connection: ResolvedRedisConnection;
  try {
    connection = resolveRedisConnection(o.connection);
  } catch (err) {
    throw new ConfigError(`${where}.connection`, (err as Error).message);
  }
  return { keys: o.keys, pattern: o.pattern, startFrom, batchEntries, blockMs, decode: o.decode ?? ((e) => e), connection };
}
