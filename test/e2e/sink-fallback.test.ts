/**
 * Falling back past a checkpoint whose output a sink already committed must not
 * commit that output again. The file sink rolls it back (moves it aside), so the visible output
 * stays exactly-once, both for in-process recovery and for `restoreFrom: <job dir>`.
 */
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSink, InjectedFault, readCommittedLines, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../../src/runtime/faults.ts';
import { checkpointInSteps } from '../support/clients.ts';
import { SourceGate } from '../support/held-source.ts';
import { buildKeyedCountJob, expectedRunningCounts, tempDir, until } from '../support/jobs.ts';

const KEYS = 500;

/** `gate` holds the input (default: not at all), so the job still runs while the test acts. */
function job(root: string, jobId: string, count: number, gate = new SourceGate(Infinity)) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: join(root, 'chk'),
    checkpointing: { retained: 3, retention: 'retain-on-cancel' },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
    jobId,
  });
  const sink = new FileSink({ directory: join(root, 'out') });
  buildKeyedCountJob(env, sink, { count, keys: KEYS, gate });
  return { env, sink, gate };
}

/** The largest file of a checkpoint directory other than `_metadata`, with a byte flipped. */
function corruptStateFile(chkDir: string): string {
  const files = readdirSync(chkDir)
    .filter((n) => n !== '_metadata')
    .map((n) => join(chkDir, n))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  const victim = files[0]!;
  const bytes = readFileSync(victim);
  bytes[bytes.length - 10]! ^= 0xff;
  writeFileSync(victim, bytes);
  return victim;
}

/** Crashes a counting subtask once, when told to. */
class CrashWhenArmed implements FaultInjector {
  armed = false;
  fired = false;
  check(site: FaultSite, ctx: FaultContext): void {
    if (!this.armed || this.fired || site !== 'process' || ctx.attempt !== 0 || !ctx.vertex.includes('count')) return;
    this.fired = true;
    throw new InjectedFault('process');
  }
}

/** Runs a job through two committed checkpoints, cancels it, and truncates the newest one's `_metadata`. */
async function twoCheckpointsThenCorruptNewest(first: ReturnType<typeof job>): Promise<{ checkpointId: number; location: string }> {
  const client = await first.env.executeAsync('first');
  const newest = (await checkpointInSteps(client, first.gate, { count: 2, step: 2_000, subtasks: 2 }))[1]!;
  await until('the sink to commit the newest checkpoint', async () => (await first.sink.newestCommitted()) === newest.checkpointId);
  await client.cancel();
  truncateSync(join(newest.location, '_metadata'), 20);
  return newest;
}

describe('sink-aware fallback', () => {
  it('in-process recovery past a corrupt checkpoint rolls the file sink back and the output stays exactly-once', async () => {
    const root = tempDir();
    const count = 60_000;
    const { env, sink, gate } = job(root, 'fallback', count, new SourceGate());
    const faults = new CrashWhenArmed();
    const events: JobEvent[] = [];
    const client = await env.executeAsync('fallback', { faults, onEvent: (e) => events.push(e) });
    const second = (await checkpointInSteps(client, gate, { count: 2, step: 5_000, subtasks: 2 }))[1]!;
    await until('the sink to commit checkpoint 2', async () => (await sink.newestCommitted()) === second.checkpointId);
    const victim = corruptStateFile(second.location);
    faults.armed = true;
    gate.open();
    const result = await client.result;
    expect(faults.fired).toBe(true);
    expect(result.status).toBe('FINISHED');
    const fallback = events.find((e) => e.type === 'restore-fallback');
    expect(fallback?.type === 'restore-fallback' && fallback.reason).toContain(victim);
    const rolled = events.find((e) => e.type === 'sink-rolled-back');
    expect(rolled?.type === 'sink-rolled-back' && rolled.after).toBe(second.checkpointId - 1);
    expect(readCommittedLines(join(root, 'out')).sort()).toEqual(expectedRunningCounts(count, KEYS));
    expect(existsSync(join(root, 'out', '.rolled-back', `after-checkpoint-${second.checkpointId - 1}`))).toBe(true);
  });

  it('restoreFrom a job directory skips a corrupt newest _metadata, rolls back, and stays exactly-once', async () => {
    const root = tempDir();
    const count = 40_000;
    const first = job(root, 'first', count, new SourceGate());
    const newest = await twoCheckpointsThenCorruptNewest(first);
    const events: JobEvent[] = [];
    const second = job(root, 'second', count);
    const result = await second.env.execute('second', { restoreFrom: join(root, 'chk', 'first'), onEvent: (e) => events.push(e) });
    expect(result.status).toBe('FINISHED');
    const fallback = events.find((e) => e.type === 'restore-fallback');
    expect(fallback?.type === 'restore-fallback' && fallback.reason).toContain(join(newest.location, '_metadata'));
    const running = events.find((e) => e.type === 'running');
    expect(running?.type === 'running' && running.restoredFrom).toBe(newest.checkpointId - 1);
    expect(events.some((e) => e.type === 'sink-rolled-back')).toBe(true);
    expect(readCommittedLines(join(root, 'out')).sort()).toEqual(expectedRunningCounts(count, KEYS));
  });

  it('refuses to restore past a sink that cannot roll back, naming it and both checkpoints, unless duplicates are accepted', async () => {
    const root = tempDir();
    const first = job(root, 'first', 40_000, new SourceGate());
    const newest = await twoCheckpointsThenCorruptNewest(first);
    const build = () => {
      const j = job(root, 'second', 40_000);
      // The same files, seen through a sink that can tell what it committed but cannot roll back.
      (j.sink as { rollBackAfter?: unknown }).rollBackAfter = undefined;
      return j;
    };
    const error = await build()
      .env.execute('second', { restoreFrom: join(root, 'chk', 'first') })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain(`has committed checkpoint ${newest.checkpointId}`);
    expect((error as Error).message).toContain(`restore checkpoint ${newest.checkpointId - 1}`);
    expect((error as Error).message).toContain("uid 'out'");
    expect((error as Error).message).toContain('--accept-duplicates');
    expect(existsSync(join(root, 'out', '.rolled-back'))).toBe(false);
    const accepted = await build().env.execute('second', { restoreFrom: join(root, 'chk', 'first'), acceptDuplicates: true });
    expect(accepted.status).toBe('FINISHED');
    // What the newest checkpoint committed is committed again: duplicates, as accepted.
    expect(readCommittedLines(join(root, 'out')).length).toBeGreaterThan(40_000);
  });
});
