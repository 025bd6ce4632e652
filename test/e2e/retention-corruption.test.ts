import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectSink, InjectedFault, StreamEnvironment } from '../../src/index.ts';
import type { JobEvent } from '../../src/index.ts';
import type { FaultContext, FaultInjector, FaultSite } from '../../src/runtime/faults.ts';
import { checkpointInSteps } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { keyedCount, tempDir } from '../support/jobs.ts';

/** Checkpoints only on demand: the test triggers them while the gate holds the input back. */
function keyedJob(dir: string, retained: number, retention: 'retain-on-cancel' | 'delete-on-cancel', gate: SourceGate, count = 20_000) {
  const env = StreamEnvironment.create({
    parallelism: 2,
    checkpointStorage: dir,
    checkpointing: { retained, retention },
    restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 },
    jobId: 'job',
  });
  const sink = new CollectSink<string>();
  heldGenerate(env, { count }, (i) => `key-${i % 2000}`, { gate })
    .uid('gen')
    .keyBy((k) => k)
    .process(keyedCount)
    .uid('count')
    .name('count')
    .sinkTo(sink);
  return { env, sink };
}

function completedDirs(jobDir: string): string[] {
  if (!existsSync(jobDir)) return [];
  return readdirSync(jobDir).filter((n) => n.startsWith('chk-') && existsSync(join(jobDir, n, '_metadata')));
}

describe('retention', () => {
  it('keeps exactly the retained number of completed checkpoints after ten', async () => {
    const dir = tempDir();
    const gate = new SourceGate();
    const { env } = keyedJob(dir, 2, 'retain-on-cancel', gate);
    const client = await env.executeAsync('retention');
    await checkpointInSteps(client, gate, { count: 10, step: 500, subtasks: 2 });
    gate.open();
    const result = await client.result;
    expect(result.checkpoints.filter((c) => c.status === 'COMPLETED').length).toBeGreaterThanOrEqual(10);
    const left = readdirSync(join(dir, 'job')).filter((n) => n.startsWith('chk-'));
    expect(left.length).toBe(2);
    expect(completedDirs(join(dir, 'job')).length).toBe(2);
  });

  it('deletes the checkpoints when the job finishes under delete-on-cancel', async () => {
    const dir = tempDir();
    const gate = new SourceGate();
    const { env } = keyedJob(dir, 3, 'delete-on-cancel', gate, 4000);
    const client = await env.executeAsync('retention');
    await checkpointInSteps(client, gate, { count: 2, step: 500, subtasks: 2 });
    gate.open();
    const result = await client.result;
    expect(result.checkpoints.some((c) => c.status === 'COMPLETED')).toBe(true);
    expect(existsSync(join(dir, 'job'))).toBe(false);
  });
});

/** After checkpoint 3 completed, corrupts a state file of the newest checkpoint and crashes a subtask. */
class CorruptThenCrash implements FaultInjector {
  armed = false;
  corrupted: string | null = null;
  constructor(private readonly jobDir: string) {}
  check(site: FaultSite, ctx: FaultContext): void {
    if (!this.armed || this.corrupted || site !== 'process' || ctx.attempt !== 0 || !ctx.vertex.includes('count')) return;
    const newest = completedDirs(this.jobDir).sort((a, b) => Number(b.slice(4)) - Number(a.slice(4)))[0]!;
    const files = readdirSync(join(this.jobDir, newest))
      .filter((n) => n !== '_metadata')
      .map((n) => join(this.jobDir, newest, n))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    const victim = files[0]!;
    const bytes = readFileSync(victim);
    bytes[bytes.length - 10]! ^= 0xff;
    writeFileSync(victim, bytes);
    this.corrupted = victim;
    throw new InjectedFault('process');
  }
}

describe('corrupted checkpoint', () => {
  it('names the corrupt file and recovers from the previous retained checkpoint', async () => {
    const dir = tempDir();
    const gate = new SourceGate();
    const { env } = keyedJob(dir, 3, 'retain-on-cancel', gate);
    const faults = new CorruptThenCrash(join(dir, 'job'));
    const events: JobEvent[] = [];
    const client = await env.executeAsync('corruption', { faults, onEvent: (e) => events.push(e) });
    await checkpointInSteps(client, gate, { count: 3, step: 1000, subtasks: 2 });
    // Checkpoint 3 is complete and most of the input is still held back: the next record crashes.
    faults.armed = true;
    gate.open();
    const result = await client.result;
    expect(faults.corrupted).not.toBeNull();
    const fallback = events.find((e) => e.type === 'restore-fallback');
    expect(fallback).toBeDefined();
    if (fallback?.type !== 'restore-fallback') throw new Error('unreachable');
    expect(fallback.reason).toContain(faults.corrupted!);
    expect(fallback.reason).toContain('checksum mismatch');
    const corruptId = fallback.checkpointId;
    const rerun = events.filter((e) => e.type === 'running');
    expect(rerun.length).toBe(2);
    if (rerun[1]!.type === 'running') {
      expect(rerun[1]!.restoredFrom).not.toBeNull();
      expect(rerun[1]!.restoredFrom!).toBeLessThan(corruptId);
    }
    expect(result.status).toBe('FINISHED');
  });
});
