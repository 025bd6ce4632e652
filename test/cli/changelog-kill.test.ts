/**
 * `weir run` with the changelog backend (over embedded) under SIGKILL: killed at the soak's seeded
 * moments, killed as a checkpoint adopting a new materialization completes (the checkpoint with
 * the longer log it replaces just subsumed), and killed while a materialization's files are being
 * written (a crash during materialization: files no checkpoint refers to); each time resumed from the job directory, the committed output checked
 * exactly by the engine-independent oracle.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCheckpointMetadataAt } from '../../src/checkpoint/restore/locate.ts';
import type { ChangelogStateHandle } from '../../src/state/handles/changelog.ts';
import { checkpointsIn, drawSteps, killGroup, runKillTrial, startKillJob, waitUntil } from './kill-harness.ts';
import { checkKillOutput } from './kill-oracle.ts';
import { KEYS, outputDirOf } from './fixtures/kill-job.ts';
import { within } from './running-job.ts';

const CHANGELOG = { KILL_PAD_BYTES: '20000', KILL_CHANGELOG_MS: '100' };

/** The materialization ids the changelog handles of a completed checkpoint refer to; null while it cannot be read (being replaced). */
async function materializationIds(chkDir: string): Promise<number[] | null> {
  try {
    const meta = await readCheckpointMetadataAt(chkDir);
    return meta.operators.flatMap((o) => o.subtasks.flatMap((s) => s.keyed)).map((h) => (h as ChangelogStateHandle).materialization.id);
  } catch {
    return null;
  }
}

/** Resumes the killed run from its job directory and checks that the committed output is every input once. */
async function resumeExactly(root: string, jobDir: string): Promise<void> {
  const last = await startKillJob(root, jobDir, { ...CHANGELOG, KILL_RATE: '200000' }, ['--quiet']);
  const done = await within(90_000, last.cli.done, () => `the resumed run did not finish; stderr:\n${last.cli.output().stderr}`);
  expect(done.code, done.stderr).toBe(0);
  expect(checkKillOutput(outputDirOf(root), 20_000, KEYS).problems).toEqual([]);
}

describe('weir run with the changelog backend under SIGKILL', () => {
  it('is killed at seeded moments and resumed, committing every input once', { timeout: 240_000 }, async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'weir-changelog-kill-'));
    try {
      const steps = drawSteps(7, 4);
      const trial = await runKillTrial({ root, steps, env: CHANGELOG });
      const where = `steps ${steps.map((x) => `${x.moment}#${x.nth}`).join(', ')}; kills: ${JSON.stringify(trial.kills)}`;
      expect(trial.final.code, `${where}\n${trial.final.stderr}`).toBe(0);
      expect(trial.check.problems, where).toEqual([]);
      expect(trial.kills.length, where).toBeGreaterThan(1);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('is killed as the first checkpoint adopting a new materialization completes (the longer log just released), and resumes exactly', {
    timeout: 240_000,
  }, async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'weir-changelog-kill-mat-'));
    try {
      const first = await startKillJob(root, null, { ...CHANGELOG, KILL_RATE: '2000' });
      let seenMaterialization = 0;
      let reached = false;
      try {
        reached = await waitUntil(first.cli, 'a checkpoint adopting a second materialization', async () => {
          const newest = checkpointsIn(first.jobDir).completed.at(-1);
          if (newest === undefined) return false;
          const ids = await materializationIds(path.join(first.jobDir, `chk-${newest}`));
          if (ids === null) return false;
          const highest = Math.max(...ids);
          // The first materialization is adopted after the job started; kill at the next one's adoption.
          if (seenMaterialization === 0 && highest > 0) seenMaterialization = highest;
          return seenMaterialization > 0 && highest > seenMaterialization;
        });
      } finally {
        await killGroup(first.cli);
      }
      expect(reached).toBe(true);
      await resumeExactly(root, first.jobDir);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('is killed while a materialization is written or awaits adoption (its files in shared/, no completed checkpoint adopting it), and resumes exactly', {
    timeout: 240_000,
  }, async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'weir-changelog-kill-during-'));
    try {
      const first = await startKillJob(root, null, { ...CHANGELOG, KILL_RATE: '2000' });
      let caught: { writing: number; adopted: number } | null = null;
      try {
        await waitUntil(first.cli, 'a materialization being written', async () => {
          const newest = checkpointsIn(first.jobDir).completed.at(-1);
          if (newest === undefined) return false; // something to resume from: a checkpoint with the log alone (materialization 0)
          const ids = await materializationIds(path.join(first.jobDir, `chk-${newest}`));
          if (ids === null) return false;
          const adopted = Math.max(...ids);
          // A materialization's files go to shared/ (small later ones may be inline in its handle): one
          // with files that no completed checkpoint adopts yet is being written or awaits adoption.
          const files = await readdir(path.join(first.jobDir, 'shared')).catch(() => [] as string[]);
          const writing = Math.max(0, ...files.map((f) => Number(/^chlog-mat-(\d+)-/.exec(f)?.[1] ?? 0)));
          if (writing <= adopted) return false;
          caught = { writing, adopted };
          return true;
        });
      } finally {
        await killGroup(first.cli);
      }
      expect(caught, 'no materialization was caught being written').not.toBeNull();
      await resumeExactly(root, first.jobDir);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
