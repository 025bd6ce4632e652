import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, JobFailedError, RestoreError, StreamEnvironment } from '../../src/index.ts';
import type { JobClient, StreamEnvironmentOptions } from '../../src/index.ts';
import { keyedStateAt, readCheckpointMetadataAt } from '../support/read-state.ts';
import { whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { keyedCount, tempDir } from '../support/jobs.ts';

const N = 12_000;
const KEYS = 400;
const key = (i: number) => `k${(i * 7919) % KEYS}`;

function expectedOutput(): string[] {
  const counts = new Map<string, number>();
  const out: string[] = [];
  for (let i = 0; i < N; i++) {
    const n = (counts.get(key(i)) ?? 0) + 1;
    counts.set(key(i), n);
    out.push(`${key(i)}:${n}`);
  }
  return out.sort();
}

/**
 * `sink` stands for the one external system all runs write to: commits are keyed by transaction, so
 * a restored run re-committing what the savepoint pre-committed changes nothing. `gate` holds the
 * input (default: not at all), so the job is still running when a savepoint or stop arrives.
 */
function countingJob(options: StreamEnvironmentOptions, countUid = 'count', sink = new CollectSink<string>(), gate = new SourceGate(Infinity)) {
  const env = StreamEnvironment.create({ checkpointing: { retention: 'retain-on-cancel' }, restartStrategy: { type: 'none' }, ...options });
  heldGenerate(env, { count: N }, key, { gate })
    .uid('keys')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid(countUid)
    .sinkTo(sink)
    .uid('sink');
  return { env, sink };
}

/** Starts a job whose gate holds it; resolves once it runs and took a checkpoint (on demand). */
async function heldRun(env: StreamEnvironment, name: string, run: { restoreFrom?: string } = {}): Promise<JobClient> {
  const client = await env.executeAsync(name, run);
  await whenRunning(client);
  await client.triggerCheckpoint();
  return client;
}

describe('savepoints', () => {
  it('stop-with-savepoint, then restore at 5 and at 2: the output across the three runs is exactly-once', async () => {
    const root = tempDir();
    const savepoints = join(root, 'savepoints');
    const external = new CollectSink<string>();
    let from: string | undefined;
    let lastResult = null;
    for (const [p, stop] of [
      [3, true],
      [5, true],
      [2, false],
    ] as const) {
      // The stopped runs are held at 1,000 records a subtask, so each stops part-way.
      const gate = new SourceGate(stop ? 1_000 : Infinity);
      const { env } = countingJob({ parallelism: p, checkpointStorage: join(root, 'chk') }, 'count', external, gate);
      const client = stop ? await heldRun(env, 'rescale', { restoreFrom: from }) : await env.executeAsync('rescale', { restoreFrom: from });
      if (stop) {
        from = await client.stopWithSavepoint(savepoints);
        expect(readdirSync(savepoints)).toContain(from.split('/').pop());
      }
      lastResult = await client.result;
      expect(lastResult.status).toBe('FINISHED');
      // Stop-with-savepoint committed everything up to the savepoint: the output so far is whole.
      if (stop) expect(external.results().length).toBeLessThan(N);
    }
    expect(external.results().sort()).toEqual(expectedOutput());
    const meta = await readCheckpointMetadataAt(lastResult!.lastCheckpointLocation!);
    const state = await keyedStateAt(meta, 'count', 'n');
    expect(state.size).toBe(KEYS);
    for (let k = 0; k < KEYS; k++) expect(state.get(`k${k}`)).toBe(N / KEYS);
  });

  it('a savepoint directory copied elsewhere restores; the job goes on after a plain savepoint', async () => {
    const root = tempDir();
    const external = new CollectSink<string>();
    const { env } = countingJob({ parallelism: 2, checkpointStorage: join(root, 'chk') }, 'count', external, new SourceGate(2_000));
    const client = await heldRun(env, 'relocate');
    const location = await client.savepoint(join(root, 'savepoints'));
    expect(client.metrics().status).toBe('RUNNING');
    await client.cancel();
    const moved = join(root, 'moved');
    cpSync(location, moved, { recursive: true });
    rmSync(location, { recursive: true });
    const meta = await readCheckpointMetadataAt(moved);
    expect(meta.kind).toBe('savepoint');
    const second = countingJob({ parallelism: 3, checkpointStorage: join(root, 'chk2') }, 'count', external);
    const result = await second.env.execute('relocated', { restoreFrom: moved });
    expect(result.status).toBe('FINISHED');
    // Cancelled after the savepoint, resumed from its copy: every update committed exactly once.
    expect(external.results().sort()).toEqual(expectedOutput());
  });

  it('state whose uid the job no longer has fails the restore by name, unless allowed', async () => {
    const root = tempDir();
    const { env } = countingJob({ parallelism: 2, checkpointStorage: join(root, 'chk') }, 'count', undefined, new SourceGate(1_000));
    const client = await heldRun(env, 'uids');
    const location = await client.stopWithSavepoint(join(root, 'sp'));
    const renamed = countingJob({ parallelism: 2, checkpointStorage: join(root, 'chk2') }, 'count-v2');
    const error = await renamed.env.execute('renamed', { restoreFrom: location }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as Error).message).toContain("uid 'count'");
    expect((error as Error).message).toContain('--allow-non-restored-state');
    const allowed = countingJob({ parallelism: 2, checkpointStorage: join(root, 'chk3') }, 'count-v3');
    const result = await allowed.env.execute('allowed', { restoreFrom: location, allowNonRestoredState: true });
    expect(result.status).toBe('FINISHED');
  });

  it('a different maxParallelism is refused clearly', async () => {
    const root = tempDir();
    const { env } = countingJob({ parallelism: 2, checkpointStorage: join(root, 'chk') }, 'count', undefined, new SourceGate(1_000));
    const client = await heldRun(env, 'maxp');
    const location = await client.stopWithSavepoint(join(root, 'sp'));
    const other = countingJob({ parallelism: 2, maxParallelism: 64, checkpointStorage: join(root, 'chk2') });
    const error = await other.env.execute('maxp2', { restoreFrom: location }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('maxParallelism 128');
    expect((error as Error).message).toContain('maxParallelism cannot change');
    expect((error as Error & { cause?: unknown }).cause).toBeInstanceOf(RestoreError);
  });

  it('a corrupted savepoint file is named and nothing is restored', async () => {
    const root = tempDir();
    const { env } = countingJob({ parallelism: 1, checkpointStorage: join(root, 'chk') }, 'count', undefined, new SourceGate(1_000));
    const client = await heldRun(env, 'corrupt');
    const location = await client.stopWithSavepoint(join(root, 'sp'));
    const victim = readdirSync(location)
      .filter((n) => n !== '_metadata')
      .map((n) => join(location, n))[0]!;
    const bytes = readFileSync(victim);
    bytes[bytes.length - 3]! ^= 0x55;
    writeFileSync(victim, bytes);
    const again = countingJob({ parallelism: 1, checkpointStorage: join(root, 'chk2') });
    const error = await again.env.execute('corrupt2', { restoreFrom: location }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as Error).message).toContain(victim);
    expect(again.sink.results()).toEqual([]);
  });
});
