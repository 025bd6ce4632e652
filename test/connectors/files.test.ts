import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, FileSink, readCommittedLines, StreamEnvironment } from '../../src/index.ts';
import { TextFileSource } from '../../src/connectors/files/text-file-source.ts';
import { FaultPlan } from '../support/fault-plan.ts';
import { HeldSource } from '../support/held-source.ts';
import { tempDir } from '../support/jobs.ts';

function writeInputs(dir: string, files: number, linesPerFile: number): string[] {
  const paths: string[] = [];
  for (let f = 0; f < files; f++) {
    const lines = Array.from({ length: linesPerFile }, (_, i) => `file${f} line${i} ✓ ${'x'.repeat(i % 7)}`);
    const p = join(dir, `in-${f}.txt`);
    // The last file has no trailing newline and Windows line ends: both must read back the same.
    writeFileSync(p, f === files - 1 ? lines.join('\r\n') : `${lines.join('\n')}\n`);
    paths.push(p);
  }
  return paths;
}

function expectedLines(files: number, linesPerFile: number): string[] {
  const out: string[] = [];
  for (let f = 0; f < files; f++) for (let i = 0; i < linesPerFile; i++) out.push(`FILE${f} LINE${i} ✓ ${'X'.repeat(i % 7)}`);
  return out.sort();
}

async function run(faults?: FaultPlan) {
  const root = tempDir();
  const input = join(root, 'in');
  mkdirSync(input);
  const paths = writeInputs(input, 5, 20_000);
  const output = join(root, 'out');
  const env = StreamEnvironment.create({
    parallelism: 3,
    checkpointStorage: join(root, 'chk'),
    checkpointing: { intervalMs: 10 },
    restartStrategy: { type: 'fixed-delay', attempts: 3, delayMs: 5 },
  });
  // Paced by checkpoints: a subtask reads at most 5,000 lines between two, so each of the 100,000
  // lines' subtasks takes part in three or more while it reads (the faults at the 2nd fire).
  env
    .fromSource(new HeldSource(new TextFileSource(paths), { recordsPerCheckpoint: 5_000 }))
    .uid('lines')
    .map((l) => l.toUpperCase())
    .rebalance()
    .sinkTo(new FileSink({ directory: output }))
    .uid('files-out');
  const result = await env.execute('files', { faults });
  return { result, output };
}

describe('text file source and exactly-once file sink', () => {
  it('reads every line of every file once and commits them to visible part files', async () => {
    const { result, output } = await run();
    expect(result.status).toBe('FINISHED');
    expect(readCommittedLines(output).sort()).toEqual(expectedLines(5, 20_000));
    expect(readdirSync(join(output, '.in-progress'))).toEqual([]);
  });

  it.each([
    ['the source, mid-file', { site: 'process' as const, vertex: 'text-file', subtask: 1, nth: 40 }],
    ['the sink, while committing', { site: 'commit' as const, vertex: 'file-sink', subtask: 0, nth: 2 }],
    ['the sink, in the sync phase', { site: 'sync-phase' as const, vertex: 'file-sink', subtask: 2, nth: 2 }],
  ])('after a failure in %s, the source rewinds to its checkpointed offsets and nothing is duplicated or lost', async (_name, fault) => {
    const plan = new FaultPlan([fault]);
    const { result, output } = await run(plan);
    expect(plan.fired.length).toBe(1);
    expect(result.restarts).toBe(1);
    expect(readCommittedLines(output).sort()).toEqual(expectedLines(5, 20_000));
  });

  it('a missing input file is an error that names it', async () => {
    const root = tempDir();
    const env = StreamEnvironment.create({ restartStrategy: { type: 'none' } });
    const missing = join(root, 'nope.txt');
    env.readTextFile(missing).sinkTo(new FileSink({ directory: join(root, 'out') }));
    const error = await env.execute('missing').catch((e: unknown) => e);
    expect((error as Error).message).toContain(missing);
    expect(existsSync(join(root, 'out'))).toBe(true);
  });

  it('a FileSink without its directory, or with a format that is no function, is refused where the job is defined, naming the option', () => {
    const refused = (options: unknown): ConfigError => {
      try {
        new FileSink(options as ConstructorParameters<typeof FileSink>[0]);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return err as ConfigError;
      }
      throw new Error('accepted');
    };
    expect(refused({ dir: './out' }).option).toBe('FileSink.directory');
    expect(refused({ directory: '' }).message).toContain('FileSink.directory');
    expect(refused({ directory: './out', format: 'json' }).option).toBe('FileSink.format');
    expect(() => new FileSink({ directory: './out' })).not.toThrow();
  });
});
