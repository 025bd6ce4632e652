/**
 * In-process memory stores by URL, as buckets are to S3 clients: a job master's memory storage
 * names its store `memory://<store>`, and each in-memory task manager opens a client of its own
 * from that URL (`openMemoryStorageClient`), so they share the stored bytes and nothing of the
 * instance (its file name counters, its caches). The store also remembers the checkpoints the job
 * master discarded, and refuses any client's write into them, as the job master's own instance
 * did: a late upload of an aborted checkpoint leaves no orphan. That is a store-side rule a memory
 * store can give; a directory or an object store cannot (each client knows only its own discards),
 * so there an upload finishing after its checkpoint was discarded leaves an orphan behind: that
 * needs orphan cleanup by listing (docs/design.md, "Storage without rename").
 * The registry holds stores weakly: a store nobody uses any more is collected with its files.
 *
 * The scheme registry (`location.ts`) opens the job master's storage from `checkpointStorage`
 * (`memory:` included); a store URL is what that storage hands its task managers, and it names a
 * store only inside this process, so the registry does not resolve it from user options.
 */
import { ConfigError } from '../core/errors.ts';
import type { JobId } from '../core/ids.ts';
import { MemoryCheckpointStorage, type MemoryCheckpointStorageOptions, type MemoryStore } from './memory-storage.ts';

/** The scheme and authority of a store URL: `memory://<store>`. */
export const MEMORY_STORE_URL_PREFIX = 'memory://';

const stores = new Map<string, WeakRef<Map<string, Uint8Array>>>();
const discardedOf = new WeakMap<Map<string, Uint8Array>, Set<number>>();
const urls = new WeakMap<Set<number>, string>();
let nextStore = 1;

/** The URL naming the store of `storage` (the same URL for the same storage every time). */
export function memoryStoreUrl(storage: MemoryCheckpointStorage): string {
  const { files, discarded } = storage.store();
  const known = urls.get(discarded);
  if (known !== undefined) return known;
  for (const [url, ref] of stores) if (ref.deref() === undefined) stores.delete(url);
  const url = `${MEMORY_STORE_URL_PREFIX}store-${nextStore++}`;
  stores.set(url, new WeakRef(files));
  discardedOf.set(files, discarded);
  urls.set(discarded, url);
  return url;
}

/** Whether `location` is a store URL (not a path in memory storage, `memory:<job>/...`). */
export function isMemoryStoreUrl(location: string): boolean {
  return location.startsWith(MEMORY_STORE_URL_PREFIX);
}

/**
 * The store a store URL names.
 * @throws ConfigError naming `option` and the URL when no store of that name lives in this process.
 */
export function openMemoryStore(url: string, option = 'checkpointStorage'): MemoryStore {
  const files = isMemoryStoreUrl(url) ? stores.get(url)?.deref() : undefined;
  const discarded = files === undefined ? undefined : discardedOf.get(files);
  if (files === undefined || discarded === undefined)
    throw new ConfigError(option, `no in-process memory store at ${JSON.stringify(url)} (a memory store is reachable only in the process that created it)`);
  return { files, discarded };
}

/** A client of its own of the store `url` names, for job `jobId`: what a second process's client of the same bucket is. */
export function openMemoryStorageClient(
  url: string,
  jobId: JobId,
  options: Omit<MemoryCheckpointStorageOptions, 'files' | 'discarded'> = {},
): MemoryCheckpointStorage {
  return new MemoryCheckpointStorage(jobId, { ...options, ...openMemoryStore(url) });
}
