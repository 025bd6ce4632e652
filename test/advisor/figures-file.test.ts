/**
 * The figures file: version 2 keeps each checkpoint's sync, async and alignment times and the last
 * recovery's restore time; a version 1 file (written before them) still reads, with them unknown;
 * an unknown version is refused naming the file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backpressureOfRun, FIGURES_FILE, readFiguresFile, writeFiguresFile } from '../../src/advisor/figures-file.ts';
import type { CheckpointStats } from '../../src/checkpoint/coordinator/checkpoint-stats.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'weir-figures-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const metrics = (syncMs: number, asyncMs: number, alignmentMs: number) => ({
  syncMs,
  asyncMs,
  alignmentMs,
  alignmentRecords: 0,
  persistedBytes: 100,
  stateBytes: 100,
  channelStateBytes: 0,
  unaligned: false,
  barrierArrivalsMs: [],
});

const stats = {
  checkpointId: 3,
  kind: 'checkpoint',
  isFinal: false,
  status: 'COMPLETED',
  triggeredAtMs: 1_000,
  durationMs: 40.4,
  failureReason: null,
  failureMessage: null,
  subtasks: [
    { task: { vertex: 0, subtask: 0 }, metrics: metrics(2.4, 30, 0) },
    { task: { vertex: 1, subtask: 0 }, metrics: metrics(5, 12, 9.6) },
  ],
  persistedBytes: 200,
  location: null,
} as unknown as CheckpointStats;

const CHECKPOINTING = { intervalMs: 1_000, timeoutMs: 60_000, unaligned: false, alignedTimeoutMs: 0, incremental: false };

describe('advisor figures file', () => {
  it('writes version 2 with the phases and restore time, and reads them back', () => {
    const jobDir = path.join(dir, 'v2');
    rmSync(jobDir, { recursive: true, force: true });
    mkdirSync(jobDir);
    writeFiguresFile(jobDir, 'job-1', CHECKPOINTING, 1, { lastRestoreMs: 250, backpressureRatio: 0.75 }, [stats]);
    expect(JSON.parse(readFileSync(path.join(jobDir, FIGURES_FILE), 'utf8')).version).toBe(2);
    expect(readFiguresFile(jobDir)).toEqual({
      source: jobDir,
      checkpointing: CHECKPOINTING,
      checkpoints: [
        {
          checkpointId: 3,
          status: 'completed',
          timestampMs: 1_000,
          durationMs: 40,
          stateBytes: 200,
          inflightBytes: 0,
          type: 'aligned',
          syncMs: 5,
          asyncMs: 30,
          alignmentMs: 10,
        },
      ],
      backpressureRatio: 0.75,
      restarts: 1,
      lastRestoreMs: 250,
    });
  });

  it('reads a version 1 file with the phases, aligned timeout and restore time unknown', () => {
    const jobDir = path.join(dir, 'v1');
    mkdirSync(jobDir, { recursive: true });
    const v1Checkpoint = { checkpointId: 1, status: 'completed', timestampMs: 5, durationMs: 7, stateBytes: 9, inflightBytes: 0, type: 'aligned' };
    const v1 = {
      format: 'weir-advisor-figures',
      version: 1,
      jobId: 'old',
      checkpointing: { intervalMs: 500, timeoutMs: 600_000, unaligned: false, incremental: false },
      restarts: 0,
      checkpoints: [v1Checkpoint],
    };
    writeFileSync(path.join(jobDir, FIGURES_FILE), JSON.stringify(v1));
    const f = readFiguresFile(jobDir)!;
    expect(f.checkpointing.alignedTimeoutMs).toBeNull();
    expect(f.lastRestoreMs).toBeNull();
    expect(f.backpressureRatio).toBeNull();
    expect(f.checkpoints).toEqual([{ ...v1Checkpoint, syncMs: null, asyncMs: null, alignmentMs: null }]);

    writeFileSync(path.join(jobDir, FIGURES_FILE), JSON.stringify({ ...v1, version: 3 }));
    expect(() => readFiguresFile(jobDir)).toThrow(
      `${path.join(jobDir, FIGURES_FILE)}: not a figures file of version 1 to 2 (format weir-advisor-figures, version 3)`,
    );
  });

  it('backpressure of a run: the busiest subtask over the running time, at most 1, unknown without one', () => {
    expect(backpressureOfRun([100, 600, 0], 1_000)).toBe(0.6);
    expect(backpressureOfRun([1_500], 1_000)).toBe(1);
    expect(backpressureOfRun([100], null)).toBeNull();
    expect(backpressureOfRun([], 1_000)).toBeNull();
  });
});
