/**
 * A two-phase sink's commit that is still in flight when the next checkpoint is taken, and then
 * fails: the newer checkpoint must still carry the committable, so the restore commits it (before
 * the fix the operator dropped it from its pending list when the commit started, and the epoch's
 * output was lost). The sink stands for an external system whose commits are keyed by transaction.
 */
import { describe, expect, it } from 'vitest';
import { StreamEnvironment } from '../../src/index.ts';
import type { TwoPhaseCommitSink, TwoPhaseCommitWriter } from '../../src/index.ts';
import { whenRunning } from '../support/clients.ts';
import { heldGenerate, SourceGate } from '../support/held-source.ts';
import { until } from '../support/jobs.ts';

interface Txn {
  readonly id: string;
  readonly checkpointId: number;
  readonly records: readonly number[];
}

/** Commits by id; the first commit of checkpoint 1 waits for `release` and then fails. */
class StallingSink implements TwoPhaseCommitSink<number, Txn> {
  readonly kind = 'two-phase-commit' as const;
  readonly name = 'stalling';
  readonly committed = new Map<string, readonly number[]>();
  stalled = false;
  private releaseStall: (() => void) | null = null;
  private failedOnce = false;

  release(): void {
    this.releaseStall?.();
  }

  createWriter(): TwoPhaseCommitWriter<number, Txn> {
    let records: number[] = [];
    let runId = '';
    return {
      open: (ctx) => {
        runId = ctx.runId;
      },
      write: (r) => {
        records.push(r);
      },
      preCommit: (checkpointId) => {
        const t = { id: `${runId}:${checkpointId}`, checkpointId, records };
        records = [];
        return t.records.length > 0 ? t : null;
      },
      commit: async (txns) => {
        for (const t of txns) {
          if (t.checkpointId === 1 && !this.failedOnce) {
            this.failedOnce = true;
            this.stalled = true;
            await new Promise<void>((r) => (this.releaseStall = r));
            throw new Error('the server went away during the commit of checkpoint 1');
          }
          this.committed.set(t.id, t.records);
        }
      },
    };
  }
}

describe('two-phase sink: a commit in flight across the next checkpoint', () => {
  it('fails after the next checkpoint was taken: the restore from that checkpoint commits it again', async () => {
    const N = 300;
    const gate = new SourceGate(100);
    const sink = new StallingSink();
    const env = StreamEnvironment.create({
      parallelism: 1,
      checkpointing: { intervalMs: 1_000_000 },
      restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 5 },
    });
    heldGenerate(env, { count: N }, (i) => i, { gate })
      .uid('gen')
      .sinkTo(sink)
      .uid('out');
    const job = await env.executeAsync('in-flight');
    await whenRunning(job);
    await gate.reached(1);
    await job.triggerCheckpoint(); // checkpoint 1: its commit stalls
    await until('the commit of checkpoint 1 in flight', () => sink.stalled);
    gate.allowUpTo(200);
    await gate.reached(1);
    await job.triggerCheckpoint(); // checkpoint 2, taken while checkpoint 1's commit is in flight
    sink.release(); // the commit fails: the job restarts from checkpoint 2
    await until('the restart', () => job.metrics().attempt === 1);
    gate.open();
    const result = await job.result;
    expect(result.status).toBe('FINISHED');
    expect(result.restarts).toBe(1);
    const all = [...sink.committed.values()].flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: N }, (_, i) => i));
  });

  it('commits one checkpoint after the other: a completion during a slow commit waits for it', async () => {
    const N = 300;
    const gate = new SourceGate(100);
    const sink = new OrderSink();
    const env = StreamEnvironment.create({ parallelism: 1, checkpointing: { intervalMs: 1_000_000 } });
    heldGenerate(env, { count: N }, (i) => i, { gate })
      .uid('gen')
      .sinkTo(sink)
      .uid('out');
    const job = await env.executeAsync('commit-order');
    await whenRunning(job);
    await gate.reached(1);
    await job.triggerCheckpoint(); // checkpoint 1: its commit stalls
    await until('the commit of checkpoint 1 in flight', () => sink.events.includes('begin 1'));
    gate.allowUpTo(200);
    await gate.reached(1);
    await job.triggerCheckpoint(); // checkpoint 2 completes while checkpoint 1's commit is in flight
    await job.triggerCheckpoint(); // checkpoint 3 (no records): by its completion the sink has had checkpoint 2's
    expect(sink.events).toEqual(['begin 1']);
    sink.release();
    gate.open();
    const result = await job.result;
    expect(result.status).toBe('FINISHED');
    expect(sink.events.slice(0, 4)).toEqual(['begin 1', 'end 1', 'begin 2', 'end 2']);
  });
});

/** Records when each commit begins and ends; the first commit waits for `release`. */
class OrderSink implements TwoPhaseCommitSink<number, number> {
  readonly kind = 'two-phase-commit' as const;
  readonly name = 'order';
  readonly events: string[] = [];
  private releaseFirst: (() => void) | null = null;
  private first = true;

  release(): void {
    this.releaseFirst?.();
  }

  createWriter(): TwoPhaseCommitWriter<number, number> {
    let n = 0;
    return {
      open: () => {},
      write: () => {
        n++;
      },
      preCommit: (checkpointId) => {
        const had = n > 0;
        n = 0;
        return had ? checkpointId : null;
      },
      commit: async (checkpoints) => {
        const id = checkpoints.join('+');
        this.events.push(`begin ${id}`);
        if (this.first) {
          this.first = false;
          await new Promise<void>((r) => (this.releaseFirst = r));
        }
        this.events.push(`end ${id}`);
      },
    };
  }
}
