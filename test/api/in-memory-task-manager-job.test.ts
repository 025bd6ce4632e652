/**
 * In-memory task managers build what a remote one builds, from data (issue 23 item 1): each runs
 * the job's builder against an environment of its own (its own job graph), opens its own storage
 * client from the storage URL, and writes through its own stream factory; nothing of the job
 * master's graph, storage or stream factory reaches them.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.ts';
import { checkpointId as checkpoint, jobId } from '../../src/core/ids.ts';
import { CollectSink, StreamEnvironment } from '../../src/index.ts';
import { SimWorld } from '../../src/sim/world/sim-world.ts';
import { MemoryCheckpointStorage } from '../../src/storage/memory-storage.ts';
import { memoryStoreUrl, openMemoryStorageClient, openMemoryStore } from '../../src/storage/memory-stores.ts';
import type { CheckpointStorage } from '../../src/storage/storage.ts';
import { driveUntilSettled } from '../support/drive.ts';
import { buildKeyedCountJob, expectedRunningCounts, sortedCopy } from '../support/jobs.ts';

const COUNT = 2_000;
const KEYS = 10;

describe('in-memory task managers', () => {
  it("build their own job graph from the builder and open their own storage clients of the job master's store", async () => {
    const world = new SimWorld(3, { stepCostMsMax: 0.2, slowProbability: 0, slowDelayMsMax: 0 });
    const options = { jobId: 'own-parts', parallelism: 2, checkpointing: { intervalMs: 20 }, bufferRecords: 8, channelCapacity: 2 };
    const sink = new CollectSink<string>();
    const env = StreamEnvironment.create(options);
    buildKeyedCountJob(env, sink, { count: COUNT, keys: KEYS, ratePerSec: 20_000 });
    const built: StreamEnvironment[] = [];
    const opened: Array<{ url: string; index: number; client: CheckpointStorage }> = [];
    const jmStorage = new MemoryCheckpointStorage(jobId('own-parts'));
    const storeUrl = memoryStoreUrl(jmStorage);
    const client = await env.executeAsync('own-parts', {
      env: world.environment,
      storage: jmStorage,
      inMemoryTaskManagers: 2,
      taskManagerJob: (tmEnv) => {
        built.push(tmEnv);
        buildKeyedCountJob(tmEnv, sink, { count: COUNT, keys: KEYS, ratePerSec: 20_000 });
      },
      taskManagerStorage: {
        url: storeUrl,
        open: (url, index) => {
          const own = openMemoryStorageClient(url, jobId('own-parts'));
          opened.push({ url, index, client: own });
          return own;
        },
      },
    });
    expect(await driveUntilSettled(world, client.result)).toBe(true);
    const result = await client.result;
    expect(result.status).toBe('FINISHED');
    expect(sortedCopy(sink.results())).toEqual(expectedRunningCounts(COUNT, KEYS));
    expect(built).toHaveLength(2);
    expect(built[0]).not.toBe(env);
    expect(built[0]).not.toBe(built[1]);
    expect(opened.map((o) => [o.url, o.index])).toEqual([
      [storeUrl, 0],
      [storeUrl, 1],
    ]);
    expect(opened[0]!.client).not.toBe(jmStorage);
    expect(opened[0]!.client).not.toBe(opened[1]!.client);
    // What the task managers wrote through their clients is in the job master's store: its checkpoints completed and were read back.
    expect(result.checkpoints.length).toBeGreaterThan(0);
  });
});

describe('memory stores', () => {
  it("name a storage's store by a URL; a client opened from it shares the files and what was discarded", async () => {
    const storage = new MemoryCheckpointStorage(jobId('j'));
    const url = memoryStoreUrl(storage);
    expect(url).toMatch(/^memory:\/\/store-\d+$/);
    expect(memoryStoreUrl(storage)).toBe(url);
    expect(openMemoryStore(url).files).toBe(storage.rawFiles());
    const client = openMemoryStorageClient(url, jobId('j'), { inlineThresholdBytes: 0 });
    expect(client).not.toBe(storage);
    const handle = await client.streamFactory(checkpoint(1)).write('exclusive', 'x', new Uint8Array(10));
    expect(handle.type === 'file' && storage.rawFiles().has(handle.path)).toBe(true);
    await storage.discardCheckpoint(checkpoint(2));
    await expect(client.streamFactory(checkpoint(2)).write('exclusive', 'x', new Uint8Array(10))).rejects.toThrow(/checkpoint 2 was aborted and discarded/);
  });

  it('refuse a URL no store of this process has, naming the option and the URL', () => {
    expect(() => openMemoryStore('memory://nowhere', 'checkpointStorage')).toThrow(ConfigError);
    expect(() => openMemoryStore('memory://nowhere', 'checkpointStorage')).toThrow(
      'checkpointStorage: no in-process memory store at "memory://nowhere" (a memory store is reachable only in the process that created it)',
    );
  });
});
