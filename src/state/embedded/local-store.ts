/**
 * The embedded backend's working state on local disk, in lmdb. Why lmdb: it reads synchronously, so
 * the user-facing state API stays synchronous (RocksDB's Node bindings only await), and its read
 * snapshots stay stable while writes go on (figures: BENCHMARKS.md, state (f)). Working state needs
 * no durability of its own (checkpoints give it), so lmdb runs without fsync or metasync.
 *
 * Snapshots read the store in bounded chunks (`scanChunk`), each under a read transaction that
 * ends with the chunk: an open reader stops lmdb reusing the pages written after it began, so a
 * reader held for a whole async phase made every eviction in it grow the map file (BENCHMARKS.md,
 * state (g)). The snapshot keeps its view of the sync part through pre-images instead
 * (embedded-snapshot.ts). Random puts are costly (page copies), which is why the backend writes to
 * lmdb only when it evicts.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { ConfigError } from '../../core/errors.ts';
import { errnoCode, storageIoError } from '../../storage/atomic-write.ts';
import { currentOwner, ownerMayLive } from '../../storage/run-owner.ts';

/** Working directories are `weir-state-<pid>-<label>-<random>`: the pid tells a dead run's leftovers. */
const STORE_DIR_PREFIX = 'weir-state-';
const STORE_DIR_RE = /^weir-state-(\d+)-/;

type Entry = { key: Buffer; value: Buffer };

/**
 * Address space reserved for a store's memory map: address space only (the file grows with the
 * data, and the pages are the kernel's cache). lmdb-js starts a map at 128 KB and, each time the file
 * outgrows it, maps a map twice the size without unmapping the old ones, whose resident pages
 * then count in RSS twice: at 1M keys that was 94 of the 150 MB of the map's resident pages
 * (BENCHMARKS.md, state (g)). A store past this still grows that way.
 */
const MAP_BYTES = 64 * 1024 ** 3;

type Lmdb = typeof import('lmdb');
let lmdbModule: Lmdb | null = null;

/**
 * lmdb is native code: it is loaded when the first store opens, so a job on the heap backend (and
 * `import 'weir-stream'`) never loads it. Synchronously, through its CommonJS build, because
 * stores open inside synchronous backend construction.
 */
function lmdb(): Lmdb {
  lmdbModule ??= createRequire(import.meta.url)('lmdb') as Lmdb;
  return lmdbModule;
}

/** lmdb-js's (untyped) per-store decoding hook. */
interface LmdbDecoderHook {
  decoder: { decode(bytes: Uint8Array): unknown } | undefined;
  decoderCopies: boolean;
}

/** A decoder that hands the read buffer on as it is. */
const PASS_THROUGH = { decode: (bytes: Uint8Array): unknown => bytes };

/** An iterator over a store range fixed at its first step; for synchronous scans (a reader held across turns grows the map file). */
export class StoreCursor {
  private readonly it: Iterator<Entry>;
  private head: Entry | null;
  private closed = false;

  constructor(iterable: Iterable<Entry>) {
    this.it = iterable[Symbol.iterator]();
    // The first step opens the read transaction: this is the moment the cursor sees.
    this.head = this.step();
  }

  private step(): Entry | null {
    const r = this.it.next();
    return r.done === true ? null : r.value;
  }

  peek(): Entry | null {
    return this.head;
  }

  advance(): void {
    this.head = this.closed ? null : this.step();
    if (this.head === null) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.head = null;
    this.it.return?.();
  }
}

/** One subtask's lmdb environment in a directory of its own, removed on close. */
export class LocalStore {
  private db: RootDatabase<Buffer, Buffer> | null;

  private constructor(
    readonly dir: string,
    db: RootDatabase<Buffer, Buffer>,
  ) {
    this.db = db;
  }

  /**
   * Opens a fresh store in a new directory under `root` named after `label`. A missing root is a
   * configuration error (nothing to retry); other failures are I/O errors.
   */
  static create(root: string, label: string): LocalStore {
    const safe = label.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
    let dir: string;
    try {
      dir = mkdtempSync(join(root, `${STORE_DIR_PREFIX}${process.pid}-${safe}-`));
    } catch (err) {
      if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR')
        throw new ConfigError('embeddedState.localDir', `${root} does not exist or is not a directory`);
      throw storageIoError(root, 'create embedded state directory', err);
    }
    const options = {
      path: dir,
      keyEncoding: 'binary',
      encoding: 'binary',
      compression: false,
      cache: false,
      // Working state is rebuilt from checkpoints after a crash: no fsync, no meta sync.
      noSync: true,
      noMetaSync: true,
      // Nobody else reads the files: no need to zero memory lmdb hands out for pages.
      noMemInit: true,
    } as const;
    let db: RootDatabase<Buffer, Buffer>;
    try {
      // Not on Windows, where lmdb may size the file to its map: there the map grows as before.
      db = lmdb().open<Buffer, Buffer>(process.platform === 'win32' ? options : { ...options, mapSize: MAP_BYTES });
    } catch {
      // An address-space limit (ulimit -v) can refuse the reservation: lmdb's own growing map works there.
      db = lmdb().open<Buffer, Buffer>(options);
    }
    return new LocalStore(dir, db);
  }

  private get live(): RootDatabase<Buffer, Buffer> {
    if (this.db === null) throw new Error(`embedded state store ${this.dir} is closed`);
    return this.db;
  }

  /** Removes the working directories under `root` of processes on this host that are gone; returns them. */
  static removeDeadStores(root: string): string[] {
    const removed: string[] = [];
    const host = currentOwner().host;
    for (const name of readdirSync(root)) {
      const m = STORE_DIR_RE.exec(name);
      if (m === null || ownerMayLive({ pid: Number(m[1]), host })) continue;
      rmSync(join(root, name), { recursive: true, force: true });
      removed.push(join(root, name));
    }
    return removed;
  }

  /**
   * The stored bytes (a copy), or undefined. Copied out of lmdb's reusable read buffer with
   * `Buffer.from`, which carves values under 4 KB out of Node's shared pool: lmdb's own copy
   * (`getBinary`) makes an ArrayBuffer per value, and a delta snapshot reading 600 k of them made
   * the collector hold the thread 70-100 ms at a time (profiled: BENCHMARKS.md, changelog).
   */
  get(key: Uint8Array): Uint8Array | undefined {
    return this.read(key, copyBytes);
  }

  /**
   * The stored bytes decoded by `decode` without copying them first (lmdb hands out its reusable
   * read buffer, overwritten by the next read), or undefined when the key is absent. For the cache's
   * misses, which decode at once: `get` copies into a new buffer per read.
   */
  read<T>(key: Uint8Array, decode: (bytes: Uint8Array) => T): T | undefined {
    const db = this.live;
    const bytes = db.getBinaryFast(key as Buffer);
    if (bytes === undefined) return undefined;
    // The reusable buffer is longer than the value: its length is lmdb's `lastSize` (not typed).
    return decode(bytes.subarray(0, (db as unknown as { lastSize: number }).lastSize));
  }

  /**
   * The stored bytes as a latin1 string (one char per byte), or undefined: a compact copy to keep
   * (a string costs a header and its bytes; a Buffer copy costs two objects and an allocation).
   */
  getLatin1(key: Uint8Array): string | undefined {
    const db = this.live;
    const bytes = db.getBinaryFast(key as Buffer);
    if (bytes === undefined) return undefined;
    return bytes.toString('latin1', 0, (db as unknown as { lastSize: number }).lastSize);
  }

  /** Writes puts (value) and deletes (null) in one write transaction, in key order. */
  write(batch: Array<readonly [Buffer, Uint8Array | null]>): void {
    if (batch.length === 0) return;
    this.writeBatches((write) => write(batch));
  }

  /**
   * Runs `body` in one write transaction; each batch it passes to `write` is written at once, in
   * key order. Reads made in `body` see the batches written before them. Writing batch by batch
   * lets a caller drop each batch before building the next: a transaction's worth of key and value
   * buffers held at once outlived V8's young generation (BENCHMARKS.md, state (g)).
   */
  writeBatches(body: (write: (batch: Array<readonly [Buffer, Uint8Array | null]>) => void) => void): void {
    const db = this.live;
    db.transactionSync(() => {
      body((batch) => {
        batch.sort((a, b) => Buffer.compare(a[0], b[0]));
        for (const [key, value] of batch) {
          // Inside transactionSync, put and remove join the open write transaction synchronously.
          if (value === null) void db.remove(key);
          else void db.put(key, value as Buffer);
        }
      });
    });
  }

  /**
   * Visits up to `limit` entries of [start, end) in key order, after `after` (exclusive) when given,
   * under one read transaction released before this returns; returns the last key visited, or null.
   * The value `visit` gets may be lmdb's reusable read buffer, valid during the call only, of which
   * the first `length` bytes are the value (its `byteLength` is the buffer's). Taking entries as
   * lmdb-js returns them copied every value into a buffer of its own (a backing store per entry):
   * with the GC behind them, a third of a 1 M-key snapshot's CPU (2026-12-05 profile). lmdb-js
   * hands a store's `decoder` the reusable buffer uncopied when `decoderCopies` is set; a binary
   * store has no decoder, so one is set for the scan only (it is synchronous: no other read of this
   * store runs meanwhile) and removed after it, also when `visit` throws.
   */
  scanChunk(start: Buffer, end: Buffer, limit: number, after: Buffer | null, visit: (key: Buffer, value: Uint8Array, length: number) => void): Buffer | null {
    const db = this.live as unknown as RootDatabase<Buffer, Buffer> & LmdbDecoderHook;
    const from = after !== null && Buffer.compare(after, start) >= 0 ? after : null;
    let last: Buffer | null = null;
    let visited = 0;
    db.decoder = PASS_THROUGH;
    db.decoderCopies = true;
    try {
      for (const e of db.getRange({ start: from ?? start, end, limit: from === null ? limit : limit + 1 }) as Iterable<Entry>) {
        if (from !== null && last === null && e.key.equals(from)) continue;
        if (visited === limit) break;
        // The reusable buffer's `length` is set to the value's size (lmdb-js makes it writable for
        // that); a value handed over in a buffer of its own has its own length.
        visit(e.key, e.value, e.value.length);
        last = e.key;
        visited++;
      }
    } finally {
      db.decoder = undefined;
      db.decoderCopies = false;
    }
    return last;
  }

  /** A cursor over [start, end) as of its first step. */
  cursor(start: Buffer, end: Buffer): StoreCursor {
    return new StoreCursor(this.live.getRange({ start, end }) as Iterable<Entry>);
  }

  count(start: Buffer, end: Buffer): number {
    return this.live.getKeysCount({ start, end });
  }

  /** Closes the environment and deletes its directory. Cursors must be closed first. */
  close(): void {
    const db = this.db;
    if (db === null) return;
    this.db = null;
    void db.close().catch(() => undefined);
    forgetClosed(db);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * lmdb-js registers every store it opens in its exported `allDbs` map and never removes it, so a
 * process that opens many (a simulator, restarting subtasks) would keep every closed one
 * (BENCHMARKS.md, state (f)). The map is not in lmdb's typings, hence the cast.
 */
function forgetClosed(db: RootDatabase<Buffer, Buffer>): void {
  const registry = (lmdb() as unknown as { allDbs?: Map<string, unknown> }).allDbs;
  if (registry === undefined) return;
  for (const [name, entry] of registry) if (entry === db) registry.delete(name);
}

/** A copy of `bytes` (from Node's pool when small). */
function copyBytes(bytes: Uint8Array): Uint8Array {
  return Buffer.from(bytes);
}
