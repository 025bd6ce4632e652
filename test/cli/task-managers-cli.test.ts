import { existsSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { until } from '../support/jobs.ts';
import { type CliResult, FIXTURES, lines, runCli, startCli } from './run-cli.ts';
import { startJob, within } from './running-job.ts';

describe('weir run with task managers', () => {
  it('runs a job module whose options ask for two task managers in worker threads, exactly once', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const r = await runCli(['run', path.join(FIXTURES, 'tm-counts-job.ts'), '--checkpoint-dir', chk], { env: { COUNTS_RATE: '20000' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('parallelism 2, on 2 task managers (worker threads)');
    expect(r.stdout).toContain('counts: all 8000 lines committed exactly once');
  });

  it('a job module asking for task managers with memory checkpoints runs on them, its state inline in the metadata, exactly once', async () => {
    // The job writes to <checkpointStorage>/counts-output, here ./memory/counts-output: a fresh working directory.
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const r = await runCli(['run', path.join(FIXTURES, 'tm-counts-job.ts')], { cwd, env: { COUNTS_RATE: '20000' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('parallelism 2, on 2 task managers (worker threads), checkpoints every 200 ms in memory');
    expect(r.stdout).toContain('counts: all 8000 lines committed exactly once');
  });
});

describe('weir run: where subtasks run by default', () => {
  it('one task manager per core up to the parallelism, with memory or directory checkpoints; one with --task-managers 1; in this thread only with --in-thread; the start line says which', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const job = path.join(FIXTURES, 'tiny-job.ts'); // parallelism 2
    const [onDisk, inMemory, one, inThread] = await Promise.all([
      runCli(['run', job, '--checkpoint-dir', chk]),
      runCli(['run', job]),
      runCli(['run', job, '--task-managers', '1', '--checkpoint-dir', chk]),
      runCli(['run', job, '--in-thread']),
    ]);
    const perCore = Math.min(os.availableParallelism(), 2);
    for (const r of [onDisk, inMemory, one, inThread]) expect(r.code, r.stderr).toBe(0);
    const placed =
      perCore > 1 ? `parallelism 2, on ${perCore} task managers (worker threads, one per core)` : 'parallelism 2, on 1 task manager (worker thread, one core)';
    expect(onDisk.stderr).toContain(placed);
    expect(inMemory.stderr).toContain(`${placed}, checkpoints every 50 ms in memory`);
    expect(one.stderr).toContain('parallelism 2, on 1 task manager (worker thread)');
    expect(inThread.stderr).toContain("parallelism 2, in this thread (taskManagers: 'in-thread'), checkpoints every 50 ms in memory");
    for (const r of [onDisk, inMemory, one, inThread]) expect(r.stderr).not.toContain('WEIR_TASK_MANAGERS_IN_THREAD');
  });
});

describe('weir run --task-managers / --slots-per-task-manager', () => {
  it('runs the counts job on two task managers given by the flag, exactly once', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const r = await runCli(['run', path.join(FIXTURES, 'counts-job.ts'), '--task-managers', '2', '--slots-per-task-manager', '1', '--checkpoint-dir', chk], {
      env: { COUNTS_RATE: '20000' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('parallelism 2, on 2 task managers (worker threads)');
    expect(r.stdout).toContain('counts: all 8000 lines committed exactly once');
  });

  it('bad flag values are refused naming the flag or the option, and weir help run lists both flags', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const job = path.join(FIXTURES, 'tiny-job.ts');
    const [zero, word, slots, tooFew, help, both] = await Promise.all([
      runCli(['run', job, '--task-managers', '0', '--checkpoint-dir', chk]),
      runCli(['run', job, '--task-managers', 'two', '--checkpoint-dir', chk]),
      runCli(['run', job, '--task-managers', '2', '--slots-per-task-manager', '0', '--checkpoint-dir', chk]),
      runCli(['run', job, '-p', '3', '--task-managers', '2', '--slots-per-task-manager', '1', '--checkpoint-dir', chk]),
      runCli(['help', 'run']),
      runCli(['run', job, '--task-managers', '2', '--in-thread']),
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--in-thread runs every subtask in this thread: it cannot be given with --task-managers 2');
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--task-managers: the number of task managers must be an integer >= 1');
    expect(word.code).toBe(2);
    expect(word.stderr).toContain('--task-managers: the number of task managers must be an integer >= 1');
    expect(slots.code).toBe(2);
    expect(slots.stderr).toContain('--slots-per-task-manager: the number of slots must be an integer >= 1');
    expect(tooFew.code).not.toBe(0);
    expect(tooFew.stderr).toContain("slotsPerTaskManager: 2 task managers x 1 slots hold 2 subtasks of a vertex, the job's highest parallelism is 3");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--task-managers <n>');
    expect(help.stdout).toContain('--slots-per-task-manager <m>');
    expect(help.stdout).toContain('--in-thread');
  });

  it('a job module that builds another uid in a worker is named, and the run fails (exit 1) without retrying', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const r = await runCli(['run', path.join(FIXTURES, 'uid-drift-job.ts'), '--task-managers', '2', '--checkpoint-dir', chk, '--quiet']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /task manager \d built a different job graph than the job master: uid 'double' \(vertex 0, '[^']+'\) is missing; that vertex has uids 'numbers', 'double-in-a-worker'/,
    );
    expect(r.stderr).toMatch(/0 restarts|would come back on every retry/);
  });
});

describe('the cancellation watchdog', () => {
  it('SIGINT cancels a job whose map spins in a worker: the stuck task manager is terminated, exit 130', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const marker = path.join(chk, 'spinning');
    const cli = startCli(['run', path.join(FIXTURES, 'spin-job.ts'), '--task-managers', '2', '--checkpoint-dir', chk], { env: { SPIN_MARKER: marker } });
    let r: CliResult;
    try {
      await until('the map to spin', () => existsSync(marker), 60_000);
      cli.child.kill('SIGINT');
      r = await cli.done;
    } finally {
      cli.child.kill('SIGKILL');
    }
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('SIGINT: cancelling the job');
    expect(r.stderr).toMatch(/task manager \d did not stop its subtasks within cancellationTimeoutMs \(1000 ms\): terminated/);
    expect(lines(r.stderr).at(-1)).toMatch(/^CANCELED \| job spin-/);
  });

  it('weir list and weir cancel answer while a map spins in a worker: the job ends CANCELED, exit 130', async () => {
    const chk = mkdtempSync(path.join(os.tmpdir(), 'weir-tm-cli-'));
    const marker = path.join(chk, 'spinning');
    const job = await startJob([path.join(FIXTURES, 'spin-job.ts'), '--task-managers', '2', '--checkpoint-dir', chk], { env: { SPIN_MARKER: marker } });
    try {
      await until('the map to spin', () => existsSync(marker), 60_000);
      // `weir list` asks the job's control endpoint for its status: the main thread answers.
      const listed = await runCli(['list']);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`${job.jobId}.*RUNNING`));
      const cancelled = await runCli(['cancel', job.jobId]);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(cancelled.stderr).toContain(`cancelled job ${job.jobId}`);
      const run = await within(60_000, job.cli.done, () => `weir run did not end after weir cancel; stderr:\n${job.cli.output().stderr}`);
      expect(run.code, run.stderr).toBe(130);
      expect(run.stderr).toMatch(/did not stop its subtasks within cancellationTimeoutMs \(1000 ms\): terminated/);
      expect(lines(run.stderr).at(-1)).toMatch(/^CANCELED \| job spin-/);
    } finally {
      job.cli.child.kill('SIGKILL');
    }
  });
});
