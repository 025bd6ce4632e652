import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSink, readCommittedLines } from '../../src/index.ts';
import type { FileCommittable } from '../../src/connectors/files/file-sink.ts';
import type { RuntimeContext } from '../../src/runtime/functions.ts';
import { tempDir } from '../support/jobs.ts';

/** The part of a runtime context the file sink reads. */
function ctx(runId: string, subtaskIndex = 0, parallelism = 1): RuntimeContext {
  return { uid: 'out', subtaskIndex, parallelism, maxParallelism: 128, attempt: 0, runId, restored: true } as unknown as RuntimeContext;
}

/** One run of one subtask: opens on the restored committables, writes lines, pre-commits them for `checkpointId`. */
async function run(sink: FileSink, runId: string, restored: FileCommittable[], lines: string[], checkpointId: number): Promise<FileCommittable> {
  const writer = sink.createWriter();
  await writer.open(ctx(runId), restored);
  if (restored.length > 0) await writer.commit(restored);
  for (const l of lines) writer.write(l);
  const c = writer.preCommit(checkpointId)!;
  writer.dispose?.();
  return c;
}

describe('file sink across processes (in-progress names unique per process)', () => {
  it("restoring the same checkpoint twice never commits another run's file over committed output", async () => {
    const dir = tempDir();
    const sink = new FileSink({ directory: dir });
    // Process 1 pre-commits checkpoint 1 and dies before committing it.
    const cp1 = await run(sink, 'proc1aaa-a0', [], ['a', 'b'], 1);
    // Process 2 restores checkpoint 1 (commits it), writes more, dies before checkpoint 2.
    await run(sink, 'proc2bbb-a0', [cp1], ['c-uncommitted'], 2);
    expect(readCommittedLines(dir)).toEqual(['a', 'b']);
    // Process 3 restores checkpoint 1 again: the committed file keeps its content, process 2's file is cleaned up.
    const writer = sink.createWriter();
    await writer.open(ctx('proc3ccc-a0'), [cp1]);
    await writer.commit([cp1]);
    expect(readCommittedLines(dir)).toEqual(['a', 'b']);
    expect(readdirSync(join(dir, '.in-progress'))).toEqual([]);
  });

  it('in-progress names carry the uid, subtask, parallelism and run id', async () => {
    const dir = tempDir();
    const c = await run(new FileSink({ directory: dir }), 'r1xxxxxx-a3', [], ['x'], 7);
    expect(c.inProgress).toBe(join(dir, '.in-progress', 'out-0of1-r1xxxxxx-a3-0.inprogress'));
    expect(c.final).toBe(join(dir, 'part-0-7'));
  });

  it("keeps files a restored committable names and files of the current run, deletes other runs' leftovers", async () => {
    const dir = tempDir();
    const sink = new FileSink({ directory: dir });
    const writers = await Promise.all(
      ['old1aaaa-a0', 'old2bbbb-a1', 'newccccc-a0'].map(async (runId) => {
        const w = sink.createWriter();
        await w.open(ctx(runId), []);
        return w;
      }),
    );
    const [kept, stale, current] = writers.map((w, i) => {
      w.write(`line ${i}`);
      return w.preCommit(i + 1)!;
    }) as [FileCommittable, FileCommittable, FileCommittable];
    writeFileSync(join(dir, '.in-progress', 'other%2dsink-0of1-old2bbbb-a1-0.inprogress'), 'another sink');
    await sink.createWriter().open(ctx('newccccc-a0'), [kept]);
    expect(existsSync(kept.inProgress)).toBe(true);
    expect(existsSync(current.inProgress)).toBe(true);
    expect(existsSync(stale.inProgress)).toBe(false);
    expect(existsSync(join(dir, '.in-progress', 'other%2dsink-0of1-old2bbbb-a1-0.inprogress'))).toBe(true);
  });

  it('a commit is idempotent and never overwrites other committed output', async () => {
    const dir = tempDir();
    const sink = new FileSink({ directory: dir });
    const c = await run(sink, 'r1aaaaaa-a0', [], ['one'], 1);
    const w = sink.createWriter();
    await w.commit([c]);
    await w.commit([c]);
    expect(readFileSync(c.final, 'utf8')).toBe('one\n');
    const clash = await run(sink, 'r2bbbbbb-a0', [], ['two'], 1);
    const error = await w.commit([clash]).catch((e: unknown) => e);
    expect((error as Error).message).toContain(c.final);
    expect((error as Error).message).toContain('would overwrite');
    expect(readFileSync(c.final, 'utf8')).toBe('one\n');
  });

  it('tells the newest committed checkpoint and moves later output aside on roll-back', async () => {
    const dir = tempDir();
    const sink = new FileSink({ directory: dir });
    expect(await sink.newestCommitted()).toBeNull();
    const w = sink.createWriter();
    for (const id of [1, 2, 3]) await w.commit([await run(sink, `r${id}aaaaaa-a0`, [], [`line${id}`], id)]);
    expect(await sink.newestCommitted()).toBe(3);
    const said = await sink.rollBackAfter(1);
    expect(said).toContain('checkpoint(s) 2, 3');
    expect(readCommittedLines(dir)).toEqual(['line1']);
    expect(await sink.newestCommitted()).toBe(1);
    expect(readdirSync(join(dir, '.rolled-back', 'after-checkpoint-1')).sort()).toEqual(['part-0-2', 'part-0-3']);
    await w.commit([await run(sink, 'r9aaaaaa-a0', [], ['again'], 2)]);
    await sink.rollBackAfter(1);
    expect(readdirSync(join(dir, '.rolled-back')).sort()).toEqual(['after-checkpoint-1', 'after-checkpoint-1-1']);
  });
});
