/**
 * SIGKILL soak: `weir run` killed at seeded moments, resumed with `--from <job dir>`,
 * output checked exactly by an engine-independent oracle. `npm test` runs 10 kills on worker
 * thread task managers, 4 with task manager processes over TCP (`--task-manager-processes 2`:
 * the job master and both task manager processes die together, as a host does) and 4 with
 * checkpoints in S3 (s3rver on loopback: `--checkpoint-dir s3://...`, resumed with `--from
 * s3://<job prefix>`, moments seen by listing the bucket); `npm run soak:kill` runs 100, 50 and
 * 50 (WEIR_SOAK_KILLS, WEIR_SOAK_TCP_KILLS, WEIR_SOAK_S3_KILLS). WEIR_SOAK_SEED picks the first
 * seed; a failing trial prints its seed and moments, and `WEIR_SOAK_SEED=<seed> WEIR_SOAK_KILLS=<n>`
 * replays the plan.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { S3Objects } from '../../src/storage/s3/objects.ts';
import { checkpointDirsS3 } from '../../src/storage/s3/reader.ts';
import { s3Settings } from '../../src/storage/s3/settings.ts';
import { type S3TestServer, startS3rver } from '../support/s3-server.ts';
import { outputDirOf } from './fixtures/kill-job.ts';
import { type CheckpointLister, drawSteps, runKillTrial, type KillMoment, type TrialOptions } from './kill-harness.ts';

const FIRST_SEED = Number(process.env.WEIR_SOAK_SEED ?? 1);
const KILLS_PER_TRIAL = 4;

const VARIANTS = [
  { name: 'worker-thread task managers', kills: Number(process.env.WEIR_SOAK_KILLS ?? 10), args: [] as string[], s3: false },
  { name: 'task manager processes over TCP', kills: Number(process.env.WEIR_SOAK_TCP_KILLS ?? 4), args: ['--task-manager-processes', '2'], s3: false },
  { name: 'checkpoints in S3', kills: Number(process.env.WEIR_SOAK_S3_KILLS ?? 4), args: [] as string[], s3: true },
];

const BUCKET = 'weir-soak';

/** Completed (`_metadata` present) and half-written checkpoints of a job prefix in the bucket. */
function bucketLister(objects: S3Objects): CheckpointLister {
  return async (jobDir) => {
    const dirs = await checkpointDirsS3(objects, jobDir);
    return {
      completed: dirs.filter((d) => d.hasMetadata).map((d) => d.checkpointId),
      incomplete: dirs.filter((d) => !d.hasMetadata).map((d) => d.checkpointId),
    };
  };
}

/** A trial's options: checkpoints below the trial's own root, or below its own prefix in the bucket (output still in `root`). */
function trialOptions(
  root: string,
  seed: number,
  base: Pick<TrialOptions, 'steps' | 'env' | 'args'>,
  s3: S3TestServer | null,
  list: CheckpointLister | undefined,
): TrialOptions {
  if (s3 === null) return { root, ...base };
  return {
    root,
    ...base,
    env: { ...base.env, ...s3.env, KILL_OUTPUT: outputDirOf(root) },
    checkpointRoot: `s3://${BUCKET}/seed-${seed}`,
    ...(list ? { list } : {}),
  };
}

describe.each(VARIANTS)('weir run under SIGKILL, $name', ({ name, kills: KILLS, args, s3: inS3 }) => {
  it(`${KILLS} kills at seeded moments, each resumed from the killed run's job dir, commit every input once in per-key order`, {
    timeout: 120_000 + KILLS * 15_000,
  }, async () => {
    const seen: Record<KillMoment | 'half-written seen' | 'completed before kill', number> = {
      'before-first': 0,
      during: 0,
      'after-complete': 0,
      'resumed-no-checkpoint': 0,
      'half-written seen': 0,
      'completed before kill': 0,
    };
    let kills = 0;
    let resumes = 0;
    const seeds: number[] = [];
    const s3 = inS3 ? await startS3rver([BUCKET]) : null;
    if (s3 !== null) Object.assign(process.env, s3.env);
    const list = s3 === null ? undefined : bucketLister(new S3Objects(s3Settings()));
    try {
      for (let seed = FIRST_SEED; kills < KILLS; seed++) {
        const steps = drawSteps(seed, Math.min(KILLS_PER_TRIAL, KILLS - kills));
        const root = await mkdtemp(path.join(os.tmpdir(), `weir-kill-soak-${seed}-`));
        try {
          const trial = await runKillTrial(trialOptions(root, seed, { steps, env: { KILL_PAD_BYTES: '20000' }, args }, s3, list));
          const where = `seed ${seed}, steps ${steps.map((x) => `${x.moment}#${x.nth}`).join(', ')}; kills: ${JSON.stringify(trial.kills)}`;
          expect(trial.final.code, `${where}\n${trial.final.stderr}`).toBe(0);
          expect(trial.check.problems, where).toEqual([]);
          // A trial whose job finished before its next moment ends early; the next seed goes on counting.
          expect(trial.kills.length, where).toBeGreaterThan(0);
          for (const k of trial.kills) {
            seen[k.moment]++;
            if (k.incomplete) seen['half-written seen']++;
            if (k.completed.length > 0) seen['completed before kill']++;
          }
          kills += trial.kills.length;
          resumes += trial.resumes;
          seeds.push(seed);
        } finally {
          await rm(root, { recursive: true, force: true });
        }
      }
    } finally {
      await s3?.stop();
    }
    const by = Object.entries(seen)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    process.stdout.write(
      `kill soak (${name}): ${kills} kills, ${resumes} resumes, seeds ${seeds[0]}..${seeds.at(-1)} (${seeds.length} trials): ${by}; every trial's output exact\n`,
    );
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(seen.during + seen['after-complete'] + seen['resumed-no-checkpoint']).toBeGreaterThan(0);
  });
});
