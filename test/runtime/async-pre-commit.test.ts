/**
 * A two-phase writer whose pre-commit becomes durable asynchronously (`whenPreCommitted`, as a
 * database's PREPARE TRANSACTION): the checkpoint is acknowledged only after it resolved, and a
 * rejection fails the subtask, whose records then come again from the restored checkpoint.
 */
import { describe, expect, it } from 'vitest';
import { StreamEnvironment } from '../../src/index.ts';
import type { RuntimeContext, TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../src/index.ts';
import { whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { until } from '../support/jobs.ts';

/** Records commit into `committed`; each pre-commit waits for `release` (or is rejected when `reject` says so). */
class GatedSink implements TwoPhaseCommitSink<number, number[]> {
  readonly kind = 'two-phase-commit' as const;
  readonly name = 'gated';
  readonly committed: number[] = [];
  readonly waiting: Array<{ checkpointId: number; attempt: number; release(): void; fail(err: Error): void }> = [];
  createWriter(): TwoPhaseCommitWriter<number, number[]> {
    let open: number[] = [];
    let attempt = 0;
    const sink = this;
    return {
      open(ctx: RuntimeContext) {
        attempt = ctx.attempt;
      },
      write(r) {
        open.push(r);
      },
      preCommit() {
        const c = open;
        open = [];
        return c;
      },
      whenPreCommitted(checkpointId) {
        return new Promise<void>((release, fail) => sink.waiting.push({ checkpointId, attempt, release, fail }));
      },
      async commit(cs) {
        for (const c of cs) sink.committed.push(...c);
      },
    };
  }
}

function job(count: number) {
  const env = StreamEnvironment.create({ parallelism: 1, restartStrategy: { type: 'fixed-delay', attempts: 2, delayMs: 5 } });
  const sink = new GatedSink();
  const gate = new SourceGate(1_000);
  heldGenerate(env, { count }, (i) => i, { gate })
    .uid('gen')
    .sinkTo(sink)
    .uid('out');
  return { env, sink, gate };
}

describe('asynchronous pre-commit', () => {
  it('the checkpoint completes only after the pre-commit is durable', async () => {
    const { env, sink, gate } = job(4_000);
    const client = await env.executeAsync('gated');
    await whenRunning(client);
    await gate.reached(1);
    let completed = false;
    const checkpoint = client.triggerCheckpoint().then((c) => {
      completed = true;
      return c;
    });
    await until('the pre-commit of checkpoint 1', () => sink.waiting.length === 1);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(completed).toBe(false);
    expect(sink.committed).toEqual([]);
    sink.waiting[0]!.release();
    expect((await checkpoint).checkpointId).toBe(1);
    // the final checkpoint's pre-commit is released as it comes
    gate.open();
    const releaser = setInterval(() => {
      for (const w of sink.waiting.splice(0)) w.release();
    }, 2);
    const result = await client.result.finally(() => clearInterval(releaser));
    expect(result.status).toBe('FINISHED');
    expect([...sink.committed].sort((a, b) => a - b)).toEqual(Array.from({ length: 4_000 }, (_, i) => i));
  });

  it('a failed pre-commit fails the subtask; recovery brings its records back exactly once', async () => {
    const { env, sink, gate } = job(4_000);
    const client = await env.executeAsync('gated-fail');
    await whenRunning(client);
    await gate.reached(1);
    const failing = client.triggerCheckpoint().catch((e: unknown) => e);
    await until('the pre-commit of checkpoint 1', () => sink.waiting.length === 1);
    sink.waiting.shift()!.fail(new Error('prepare failed'));
    expect(await failing).toBeInstanceOf(Error);
    gate.open();
    const releaser = setInterval(() => {
      for (const w of sink.waiting.splice(0)) w.release();
    }, 2);
    const result = await client.result.finally(() => clearInterval(releaser));
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    expect([...sink.committed].sort((a, b) => a - b)).toEqual(Array.from({ length: 4_000 }, (_, i) => i));
  });
});
