import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, JobFailedError, readCommittedLines, StreamEnvironment, type JobEvent, type StreamEnvironmentOptions } from '../../src/index.ts';
import type { JobMaster } from '../../src/internal.ts';
import { streamHandlesOf } from '../../src/checkpoint/metadata/walk.ts';
import { readCheckpointMetadataAt } from '../../src/checkpoint/restore/locate.ts';
import type { StreamStateHandle } from '../../src/storage/handles.ts';
import { whenRunning } from '../support/clients.ts';
import { tempDir, until } from '../support/jobs.ts';
import build, { expectedLines } from './fixtures/tm-counts-job.ts';

const MODULE = join(import.meta.dirname, 'fixtures', 'tm-counts-job.ts');
const VARS = [
  'TM_RECORDS',
  'TM_RATE',
  'TM_OUT',
  'TM_FAIL_AT',
  'TM_FAIL_MARKER',
  'TM_EXIT_AT',
  'TM_EXIT_MARKER',
  'TM_SLOW_MICROS',
  'TM_UID_DRIFT',
  'TM_KILL_IN_CHECKPOINT',
  'TM_KEYS',
  'TM_THROW_AT',
  'TM_THROW_MARKER',
  'TM_SPIN_AT',
  'TM_SPIN_MARKER',
  'TM_BUILDS',
];

afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

/** Sets the fixture's variables (workers copy the environment when they start). */
function configure(vars: Record<string, string | number>): void {
  for (const [k, v] of Object.entries(vars)) process.env[k] = String(v);
}

function environment(extra: StreamEnvironmentOptions = {}): StreamEnvironment {
  const env = StreamEnvironment.create({
    parallelism: 2,
    taskManagers: 2,
    checkpointStorage: tempDir('weir-tm-chk-'),
    checkpointing: { intervalMs: 100 },
    restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 50 },
    // A failover or cancel that waited for the cancellation watchdog would run into the test's timeout.
    cancellationTimeoutMs: 120_000,
    ...extra,
  });
  build(env);
  env.setJobModule(MODULE);
  return env;
}

function committed(dir: string): string[] {
  return readdirSync(dir).length === 0 ? [] : [...readCommittedLines(dir)].sort();
}

describe('task managers on worker threads', () => {
  it('a keyed count at parallelism 2 on two task managers commits exactly the expected output', async () => {
    const out = tempDir('weir-tm-out-');
    configure({ TM_RECORDS: 20_000, TM_OUT: out });
    const events: JobEvent[] = [];
    const result = await environment().execute('tm-counts', { onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(0);
    expect(committed(out)).toEqual(expectedLines(20_000));
  });

  it('exactly-once through a failure thrown in user code in a worker: every subtask restores from the same checkpoint', async () => {
    const out = tempDir('weir-tm-out-');
    const marker = join(tempDir('weir-tm-marker-'), 'failed');
    const builds = join(tempDir('weir-tm-builds-'), 'builds');
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_OUT: out, TM_FAIL_AT: 3_001, TM_FAIL_MARKER: marker, TM_BUILDS: builds });
    const events: JobEvent[] = [];
    const result = await environment().execute('tm-counts', { onEvent: (e) => events.push(e) });
    // The failure was a subtask's, not a task manager's: the restart ran on the same two, kept warm.
    expect(readFileSync(builds, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const restarting = events.find((e) => e.type === 'restarting');
    expect(restarting && restarting.type === 'restarting' && restarting.cause).toMatch(/injected failure at record \d+/);
    const running = events.filter((e) => e.type === 'running');
    expect(running).toHaveLength(2);
    expect(running[1]!.type === 'running' && running[1]!.restoredFrom).toBeGreaterThan(0);
    expect(committed(out)).toEqual(expectedLines(6_000));
  });

  it("a job module at parallelism 1 with 'memory' checkpoints runs on one worker task manager by default, its state inline in the job master's metadata: exactly-once through its worker exiting", async () => {
    const out = tempDir('weir-tm-out-');
    const marker = join(tempDir('weir-tm-marker-'), 'exited');
    const builds = join(tempDir('weir-tm-builds-'), 'builds');
    // 1,000 keys: the keyed state is well above the 1 KB that memory storage would otherwise keep
    // in a file of the worker's own map, which the replacement worker would not have.
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_KEYS: 1_000, TM_OUT: out, TM_EXIT_AT: 3_001, TM_EXIT_MARKER: marker, TM_BUILDS: builds });
    const env = environment({ parallelism: 1, checkpointStorage: 'memory', taskManagers: undefined });
    expect(env.taskManagerCount()).toEqual({ taskManagers: 1, why: 'parallelism 1', notice: null });
    const events: JobEvent[] = [];
    let master: JobMaster | null = null;
    const result = await env.execute('tm-counts', { onEvent: (e) => events.push(e), onJobMaster: (m) => (master = m) });
    expect(master!.runsOnTaskManagers).toBe(true);
    expect(readFileSync(builds, 'utf8').trim().split('\n')).toHaveLength(2); // the first worker, then its replacement
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const running = events.filter((e) => e.type === 'running');
    expect(running).toHaveLength(2);
    expect(running[1]!.type === 'running' && running[1]!.restoredFrom).toBeGreaterThan(0);
    expect(committed(out)).toEqual(expectedLines(6_000, 1_000));
  });

  it('the changelog backend on two worker task managers: the subtasks of each share log files, and a restore reads its ranges (exactly-once through a failure)', async () => {
    const out = tempDir('weir-tm-out-');
    const chk = tempDir('weir-tm-chk-');
    const marker = join(tempDir('weir-tm-marker-'), 'failed');
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_OUT: out, TM_FAIL_AT: 3_001, TM_FAIL_MARKER: marker });
    const env = environment({
      parallelism: 4,
      checkpointStorage: chk,
      // A group under the storage's 1 KB inline threshold is kept inline, not as ranges of a file:
      // at the default 10 ms delay a group of this job's changes (about 40 records) often is, and
      // whether any group passed 1 KB depended on the machine's load. A 150 ms delay gathers
      // about 300 changes a task manager a group, well past it.
      stateBackend: { type: 'changelog', uploadDelayMs: 150 },
      checkpointing: { intervalMs: 100, retention: 'retain-on-cancel', retained: 1000 },
    });
    const result = await env.execute('tm-counts', {});
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    expect(committed(out)).toEqual(expectedLines(6_000));
    // Two keyed subtasks on each task manager: their batches went into shared files, named by range.
    const [jobDirName] = readdirSync(chk);
    const jobDir = join(chk, jobDirName!);
    const ranges: StreamStateHandle[] = [];
    for (const c of readdirSync(jobDir).filter((n) => n.startsWith('chk-'))) {
      ranges.push(...streamHandlesOf(await readCheckpointMetadataAt(join(jobDir, c))).filter((h) => h.type === 'range'));
    }
    expect(ranges.length).toBeGreaterThan(0);
    for (const r of ranges) expect(existsSync(r.type === 'range' ? r.path : '')).toBe(true);
  });

  it('exactly-once through a worker thread that exits mid-run', async () => {
    const out = tempDir('weir-tm-out-');
    const marker = join(tempDir('weir-tm-marker-'), 'exited');
    const builds = join(tempDir('weir-tm-builds-'), 'builds');
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_OUT: out, TM_EXIT_AT: 2_500, TM_EXIT_MARKER: marker, TM_BUILDS: builds });
    const events: JobEvent[] = [];
    const result = await environment().execute('tm-counts', { onEvent: (e) => events.push(e) });
    // A task manager died: the restart started two new ones.
    expect(readFileSync(builds, 'utf8').trim().split('\n')).toHaveLength(4);
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    expect(events.filter((e) => e.type === 'running').map((e) => e.type === 'running' && e.restoredFrom! > 0)).toEqual([false, true]);
    const restarting = events.find((e) => e.type === 'restarting');
    expect(restarting && restarting.type === 'restarting' && restarting.cause).toMatch(/task manager \d died: its worker thread exited with code 7/);
    expect(committed(out)).toEqual(expectedLines(6_000));
  });

  it('exactly-once through an error thrown outside any subtask, which ends its worker thread', async () => {
    const out = tempDir('weir-tm-out-');
    const marker = join(tempDir('weir-tm-marker-'), 'thrown');
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_OUT: out, TM_THROW_AT: 2_500, TM_THROW_MARKER: marker });
    const events: JobEvent[] = [];
    const result = await environment().execute('tm-counts', { onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const restarting = events.find((e) => e.type === 'restarting');
    expect(restarting && restarting.type === 'restarting' && restarting.cause).toMatch(/task manager \d died: uncaught in a worker at record \d+/);
    expect(events.filter((e) => e.type === 'running').map((e) => e.type === 'running' && e.restoredFrom! > 0)).toEqual([false, true]);
    expect(committed(out)).toEqual(expectedLines(6_000));
  });

  it('a task manager stuck in user code misses its heartbeats, is terminated and replaced at once; exactly-once', async () => {
    const out = tempDir('weir-tm-out-');
    const marker = join(tempDir('weir-tm-marker-'), 'spinning');
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_OUT: out, TM_SPIN_AT: 2_500, TM_SPIN_MARKER: marker });
    const events: JobEvent[] = [];
    const env = environment({ heartbeat: { intervalMs: 100, timeoutMs: 3_000 } });
    const result = await env.execute('tm-counts', { onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const restarting = events.find((e) => e.type === 'restarting');
    expect(restarting && restarting.type === 'restarting' && restarting.cause).toMatch(
      /task manager (\d) died: no heartbeat answered for \d+ ms \(heartbeat.timeoutMs 3000\)/,
    );
    // Declared dead, it is terminated with the attempt: the failover does not wait for its cancellation timeout.
    expect(events.filter((e) => e.type === 'log' && e.message.includes('cancellationTimeoutMs'))).toEqual([]);
    expect(events.filter((e) => e.type === 'running').map((e) => e.type === 'running' && e.restoredFrom! > 0)).toEqual([false, true]);
    expect(committed(out)).toEqual(expectedLines(6_000));
  });

  it('exactly-once through a task manager killed mid-checkpoint: every subtask restores the checkpoint before it', async () => {
    const out = tempDir('weir-tm-out-');
    const marker = join(tempDir('weir-tm-marker-'), 'killed');
    configure({ TM_RECORDS: 6_000, TM_RATE: 4_000, TM_OUT: out, TM_KILL_IN_CHECKPOINT: marker });
    const events: JobEvent[] = [];
    const result = await environment().execute('tm-counts', { onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const killedIn = Number(readFileSync(marker, 'utf8'));
    const restarting = events.find((e) => e.type === 'restarting');
    expect(restarting && restarting.type === 'restarting' && restarting.cause).toMatch(/task manager 1 died: its worker thread exited with code 9/);
    expect(result.checkpoints.find((c) => c.checkpointId === killedIn)?.status).not.toBe('COMPLETED');
    const running = events.filter((e) => e.type === 'running');
    const restoredFrom = running[1]!.type === 'running' ? running[1]!.restoredFrom : null;
    expect(restoredFrom).toBeGreaterThan(0);
    expect(restoredFrom).toBeLessThan(killedIn);
    expect(committed(out)).toEqual(expectedLines(6_000));
  });

  it('a task manager whose job module builds another uid is named, and the job fails without retrying', async () => {
    configure({ TM_OUT: tempDir('weir-tm-out-'), TM_UID_DRIFT: 1 });
    const run = environment().execute('tm-counts');
    await expect(run).rejects.toThrow(JobFailedError);
    await expect(run).rejects.toThrow(
      /task manager \d built a different job graph than the job master: uid 'count' \(vertex 1, 'keyed-process -> file-sink'\) is missing; that vertex has uids 'count-drifted', 'sink'/,
    );
  });

  it('backpressure crosses threads: a slow consumer in one worker holds back a fast producer in the other', async () => {
    configure({ TM_RECORDS: 100_000_000, TM_OUT: tempDir('weir-tm-out-'), TM_SLOW_MICROS: 200 });
    let master: JobMaster | null = null;
    const env = environment({ bufferRecords: 32, channelCapacity: 2, remoteChannelCapacity: 2, checkpointing: {} });
    const events: JobEvent[] = [];
    const client = await env.executeAsync('tm-counts', { onJobMaster: (m) => (master = m), onEvent: (e) => events.push(e) });
    // Records between the sources and the counts: pending in writers, queued on the producers' side
    // (at most the credit), and received; bounded by channels x (capacity + 2) x bufferRecords.
    const bound = 8 * (2 + 2) * 32;
    const gaps: number[] = [];
    while (gaps.length < 5) {
      await new Promise((r) => setTimeout(r, 600));
      const tasks = master!.tasks;
      const produced = tasks.reduce((n, t) => n + t.sourceRecordsOut, 0);
      const sunk = tasks.reduce((n, t) => n + t.sinkRecordsIn, 0);
      if (sunk > 0) gaps.push(produced - sunk);
    }
    await client.cancel();
    expect(master!.tasks.filter((t) => t.name.startsWith('keyed-process'))).toHaveLength(0); // torn down
    // Both task managers answered the cancel: the watchdog terminated none.
    expect(events.filter((e) => e.type === 'log' && e.message.includes('cancellationTimeoutMs'))).toEqual([]);
    // Each task manager reports its figures every 100 ms on its own, so one sample may pair a
    // producer's figure with a consumer's up to an interval older or newer: allow what both sinks
    // (200 us a record) take in two intervals. Without backpressure the gap would be millions.
    const staleness = 2 * 2 * (100_000 / 200);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(bound + staleness);
    // Records in flight: some sample shows them.
    expect(Math.max(...gaps)).toBeGreaterThan(0);
  });

  it('savepoints on worker task managers: a savepoint, a stop-with-savepoint, and a resume at parallelism 3 on two task managers, exactly once', async () => {
    const out = tempDir('weir-tm-out-');
    const savepoints = tempDir('weir-tm-sp-');
    configure({ TM_RECORDS: 40_000, TM_RATE: 4_000, TM_OUT: out, TM_KEYS: 4_000 });
    const client = await environment().executeAsync('tm-counts');
    await whenRunning(client);
    await until('every key counted', () => client.metrics().recordsOut >= 6_000);
    const taken = await client.savepoint(savepoints);
    expect(existsSync(join(taken, '_metadata'))).toBe(true);
    // Subtasks in the workers wrote their state into the savepoint's own directory (too big to inline).
    expect(readdirSync(taken).filter((f) => f !== '_metadata').length).toBeGreaterThan(0);
    const stoppedAt = await client.stopWithSavepoint(savepoints);
    expect((await client.result).status).toBe('FINISHED');
    const before = committed(out).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(40_000);
    delete process.env.TM_RATE;
    const events: JobEvent[] = [];
    const result = await environment({ parallelism: 3 }).execute('tm-counts', { restoreFrom: stoppedAt, onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    expect(events.find((e) => e.type === 'running')).toMatchObject({ restoredFrom: expect.any(Number) });
    expect(committed(out)).toEqual(expectedLines(40_000, 4_000));
  });

  it("a stop-with-savepoint on worker task managers resumes in this thread ('in-thread') at parallelism 1, exactly once", async () => {
    const out = tempDir('weir-tm-out-');
    configure({ TM_RECORDS: 20_000, TM_RATE: 1_000, TM_OUT: out });
    const client = await environment().executeAsync('tm-counts');
    await whenRunning(client);
    const stoppedAt = await client.stopWithSavepoint(tempDir('weir-tm-sp-'));
    expect((await client.result).status).toBe('FINISHED');
    delete process.env.TM_RATE;
    let master: JobMaster | null = null;
    const result = await environment({ parallelism: 1, taskManagers: 'in-thread' }).execute('tm-counts', {
      restoreFrom: stoppedAt,
      onJobMaster: (m) => (master = m),
    });
    expect(result.status).toBe('FINISHED');
    expect(master!.runsOnTaskManagers).toBe(false);
    expect(committed(out)).toEqual(expectedLines(20_000));
  });

  it('options: taskManagers and slotsPerTaskManager are validated naming the option', async () => {
    const fails = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err;
      }
      return null;
    };
    const zero = fails(() => StreamEnvironment.create({ taskManagers: 0 }));
    expect(zero).toBeInstanceOf(ConfigError);
    expect((zero as ConfigError).option).toBe('taskManagers');
    expect((zero as Error).message).toContain("must be an integer between 1 and 256 or 'in-thread', got 0");
    const word = fails(() => StreamEnvironment.create({ taskManagers: 'workers' as unknown as number }));
    expect((word as ConfigError).option).toBe('taskManagers');
    expect(fails(() => StreamEnvironment.create({ taskManagers: 'in-thread' }))).toBeNull();
    // Memory storage is no longer refused: task managers keep their state inline in the metadata.
    expect(fails(() => StreamEnvironment.create({ taskManagers: 2 }))).toBeNull();
    configure({ TM_OUT: tempDir('weir-tm-out-') });
    const env = environment({ parallelism: 3, slotsPerTaskManager: 1 });
    const refused = await env.execute('tm-counts').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).option).toBe('slotsPerTaskManager');
    expect((refused as Error).message).toContain("2 task managers x 1 slots hold 2 subtasks of a vertex, the job's highest parallelism is 3");
  });

  it('a job built by a script (no job module) runs in this thread, and says so', async () => {
    const out = tempDir('weir-tm-out-');
    configure({ TM_RECORDS: 2_000, TM_OUT: out });
    const env = StreamEnvironment.create({ parallelism: 2, taskManagers: 2, checkpointStorage: tempDir('weir-tm-chk-') });
    build(env);
    const events: JobEvent[] = [];
    let master: JobMaster | null = null;
    const result = await env.execute('tm-counts', { onEvent: (e) => events.push(e), onJobMaster: (m) => (master = m) });
    expect(result.status).toBe('FINISHED');
    expect(master!.runsOnTaskManagers).toBe(false);
    expect(events).toContainEqual({ type: 'log', message: expect.stringContaining('taskManagers: 2 needs the job to come from a job module') });
    expect(committed(out)).toEqual(expectedLines(2_000));
  });
});
