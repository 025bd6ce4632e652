/**
 * Drives `weir run` on kill-job.ts through SIGKILLs of its whole process group at observable
 * moments (files appearing in the job and output directories, lines on stderr; never "within N ms"),
 * resumes each time with `--from <job dir>` as a user would, and checks the committed output with
 * the engine-independent oracle (kill-oracle.ts). Shared by the defect tests and the kill soak.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { SeededRandom } from '../../src/core/time.ts';
import { checkKillOutput, type OutputCheck } from './kill-oracle.ts';
import { FIXTURES, startCli, type CliResult, type CliRun } from './run-cli.ts';
import { waitForMatch, within } from './running-job.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';

export const KILL_JOB = path.join(FIXTURES, 'kill-job.ts');
/** Generous bounds for events on a loaded machine; a healthy run reaches each in well under a second. */
const EVENT_TIMEOUT_MS = 45_000;
const FINISH_TIMEOUT_MS = 90_000;
const POLL_MS = 2;

/**
 * Where a run is killed: at its start before any checkpoint of its own, while a checkpoint is being
 * written (a `chk-N` directory without `_metadata`), right after one completed (its `_metadata`
 * appeared), or — the shape of planted defect 1 (names per attempt) — a resumed run with a long checkpoint interval
 * once it wrote uncommitted output, so that the next run resumes again from the same checkpoint.
 */
export type KillMoment = 'before-first' | 'during' | 'after-complete' | 'resumed-no-checkpoint';
export const KILL_MOMENTS: readonly KillMoment[] = ['before-first', 'during', 'after-complete', 'resumed-no-checkpoint'];

/** A moment and which checkpoint of the run it waits for (`during` the nth, `after-complete` the nth completed). */
export interface KillStep {
  readonly moment: KillMoment;
  readonly nth: number;
}

export interface WeirRun {
  readonly cli: CliRun;
  readonly jobDir: string;
}

export interface KillRecord {
  readonly moment: KillMoment;
  readonly nth: number;
  /** What the directories showed after the kill: the run's completed checkpoints and whether one was half-written. */
  readonly completed: number[];
  readonly incomplete: boolean;
  readonly from: string | null;
}

export interface TrialResult {
  readonly kills: KillRecord[];
  readonly resumes: number;
  readonly final: CliResult;
  readonly check: OutputCheck;
}

export interface TrialOptions {
  readonly root: string;
  readonly steps: readonly KillStep[];
  /** Extra environment for every run (KILL_RECORDS, KILL_PAD_BYTES, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra arguments of every run (`--task-manager-processes 2`: its task manager processes are in its group and die with it). */
  readonly args?: readonly string[];
  /** Where the runs checkpoint when not below `root` (an `s3://` prefix; then `env` sets KILL_OUTPUT), and how its checkpoints are listed. */
  readonly checkpointRoot?: string;
  readonly list?: CheckpointLister;
}

/** How a harness reads the checkpoints of a job directory: the file system by default, a bucket for S3. */
export type CheckpointLister = (jobDir: string) => Promise<{ completed: number[]; incomplete: number[] }>;
const fsLister: CheckpointLister = async (jobDir) => checkpointsIn(jobDir);

/** `weir run kill-job.ts` in a process group of its own, once it printed its job id. */
export async function startKillJob(root: string, from: string | null, env: Readonly<Record<string, string>>, extra: readonly string[] = []): Promise<WeirRun> {
  const args = ['run', KILL_JOB, '--checkpoint-dir', root, ...(from === null ? [] : ['--from', from]), ...extra];
  const cli = startCli(args, { env, detached: true });
  try {
    const m = await waitForMatch(cli, /^control: \S+ \(job ([A-Za-z0-9._-]+)\)$/m, EVENT_TIMEOUT_MS, "the 'control:' line");
    return { cli, jobDir: root.startsWith('s3://') ? `${root}/${m[1]!}` : path.join(root, m[1]!) };
  } catch (err) {
    await killGroup(cli);
    throw err;
  }
}

/** SIGKILL to the whole process group; resolves once the command is gone. */
export async function killGroup(cli: CliRun): Promise<CliResult> {
  try {
    process.kill(-cli.child.pid!, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
  return cli.done;
}

/** Checkpoint ids in a job directory: those with `_metadata` and those without. */
export function checkpointsIn(jobDir: string): { completed: number[]; incomplete: number[] } {
  const completed: number[] = [];
  const incomplete: number[] = [];
  if (!existsSync(jobDir)) return { completed, incomplete };
  for (const name of readdirSync(jobDir)) {
    const m = /^chk-(\d+)$/.exec(name);
    if (m === null) continue;
    (existsSync(path.join(jobDir, name, '_metadata')) ? completed : incomplete).push(Number(m[1]));
  }
  return { completed: completed.sort((a, b) => a - b), incomplete: incomplete.sort((a, b) => a - b) };
}

/** Waits for `probe` (see `waitUntil`) and kills the run's group either way: a detached group would outlive a failed test. */
export async function killWhen(cli: CliRun, what: string, probe: () => boolean): Promise<boolean> {
  try {
    return await waitUntil(cli, what, probe);
  } finally {
    await killGroup(cli);
  }
}

/** Polls `probe` until it is true; false when the command exited first (it finished its input). */
export async function waitUntil(cli: CliRun, what: string, probe: () => Promise<boolean> | boolean, timeoutMs = EVENT_TIMEOUT_MS): Promise<boolean> {
  let exited = false;
  void cli.done.then(() => (exited = true));
  const poll = (async () => {
    for (;;) {
      if (await probe()) return true;
      if (exited) return probe();
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  return within(timeoutMs, poll, () => `no ${what} within ${timeoutMs} ms; stderr so far:\n${cli.output().stderr}`);
}

/**
 * The completed checkpoints seen so far in a run's job dir. With one retained checkpoint each
 * completed one stays until the next completes, so polling sees them all.
 */
export class CheckpointTracker {
  readonly completedSeen = new Set<number>();
  constructor(private readonly jobDir: string) {}
  /** Reads the job dir now, remembering every completed checkpoint. */
  poll(): { completed: number[]; incomplete: number[] } {
    return this.remember(checkpointsIn(this.jobDir));
  }

  /** `poll` through a lister (a bucket's). */
  async pollWith(list: CheckpointLister): Promise<{ completed: number[]; incomplete: number[] }> {
    return this.remember(await list(this.jobDir));
  }

  private remember(now: { completed: number[]; incomplete: number[] }): { completed: number[]; incomplete: number[] } {
    for (const id of now.completed) this.completedSeen.add(id);
    return now;
  }
}

/** Waits until checkpoint `nth` is half-written (`during`) or completed (`after-complete`); false when the run ended first. */
export function checkpointMoment(
  cli: CliRun,
  jobDir: string,
  moment: 'during' | 'after-complete',
  nth: number,
  timeoutMs?: number,
  list: CheckpointLister = fsLister,
): Promise<boolean> {
  const tracker = new CheckpointTracker(jobDir);
  if (moment === 'after-complete') {
    return waitUntil(
      cli,
      `completed checkpoint ${nth}`,
      async () => {
        await tracker.pollWith(list);
        return tracker.completedSeen.size >= nth;
      },
      timeoutMs,
    );
  }
  return waitUntil(
    cli,
    `half-written checkpoint ${nth}`,
    async () => {
      const now = await tracker.pollWith(list);
      return tracker.completedSeen.size >= nth - 1 && now.incomplete.some((id) => id > Math.max(0, ...tracker.completedSeen));
    },
    timeoutMs,
  );
}

/**
 * Non-empty in-progress files of the sink, as `name:inode`: a new run may reuse an old name (the
 * very collision of defect 1), but never the inode of a file that still exists.
 */
function inProgressFiles(outputDir: string): Set<string> {
  const dir = path.join(outputDir, '.in-progress');
  if (!existsSync(dir)) return new Set();
  const out = new Set<string>();
  for (const n of readdirSync(dir)) {
    const st = statSync(path.join(dir, n), { throwIfNoEntry: false });
    if (st !== undefined && st.size > 0) out.add(`${n}:${st.ino}`);
  }
  return out;
}

/** Waits for the step's moment in a started run; false when the run ended before it. */
async function reachMoment(run: WeirRun, step: KillStep, outputDir: string, before: Set<string>, list: CheckpointLister): Promise<boolean> {
  switch (step.moment) {
    case 'before-first':
      return true;
    case 'during':
    case 'after-complete':
      return checkpointMoment(run.cli, run.jobDir, step.moment, step.nth, undefined, list);
    case 'resumed-no-checkpoint':
      return waitUntil(run.cli, 'uncommitted output of the resumed run', () => [...inProgressFiles(outputDir)].some((n) => !before.has(n)));
  }
}

/**
 * Kills runs at the given moments, each resumed from the job directory of the newest run that
 * completed a checkpoint (a fresh start while none did), then lets a last run finish and checks
 * the committed output. A run that finishes before its moment ends the kills early.
 */
export async function runKillTrial(o: TrialOptions): Promise<TrialResult> {
  const slow = { KILL_RATE: '2000', ...o.env };
  const outputDir = outputDirOf(o.root);
  const checkpointRoot = o.checkpointRoot ?? o.root;
  const list = o.list ?? fsLister;
  const kills: KillRecord[] = [];
  let latest: string | null = null;
  let resumes = 0;
  let finished: CliResult | null = null;
  for (const step of o.steps) {
    const before = inProgressFiles(outputDir);
    const longInterval = step.moment === 'resumed-no-checkpoint' ? ['--checkpoint-interval', '600000'] : [];
    const run = await startKillJob(checkpointRoot, latest, slow, [...longInterval, ...(o.args ?? [])]);
    if (latest !== null) resumes++;
    let reached = false;
    try {
      reached = await reachMoment(run, step, outputDir, before, list);
    } finally {
      // Killed at the moment, and on a timeout too: a detached group would outlive the test.
      await killGroup(run.cli);
    }
    if (!reached) {
      finished = await run.cli.done;
      break;
    }
    const seen = await list(run.jobDir);
    kills.push({ ...step, completed: seen.completed, incomplete: seen.incomplete.length > 0, from: latest });
    if (seen.completed.length > 0) latest = run.jobDir;
  }
  if (finished === null) {
    const run = await startKillJob(checkpointRoot, latest, { ...o.env, KILL_RATE: '200000' }, ['--quiet', ...(o.args ?? [])]);
    if (latest !== null) resumes++;
    try {
      finished = await within(FINISH_TIMEOUT_MS, run.cli.done, () => `the last run did not finish; stderr:\n${run.cli.output().stderr}`);
    } finally {
      await killGroup(run.cli);
    }
  }
  const records = Number(o.env?.KILL_RECORDS ?? 20_000);
  return { kills, resumes, final: finished, check: checkKillOutput(outputDir, records, KEYS) };
}

/**
 * Kill steps drawn from a seed: every run of four steps holds each moment once, in a seeded order,
 * so even the 10 kills of `npm test` reach every moment; which checkpoint a step waits for is drawn too.
 */
export function drawSteps(seed: number, count: number): KillStep[] {
  const r = new SeededRandom(seed);
  const steps: KillStep[] = [];
  while (steps.length < count) {
    const moments = [...KILL_MOMENTS];
    for (let i = moments.length - 1; i > 0; i--) {
      const j = r.int(i + 1);
      [moments[i], moments[j]] = [moments[j]!, moments[i]!];
    }
    for (const moment of moments) steps.push({ moment, nth: 1 + r.int(3) });
  }
  return steps.slice(0, count);
}
