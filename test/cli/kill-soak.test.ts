/**
 * SIGKILL soak: `weir run` killed at seeded moments, resumed with `--from <job dir>`,
 * output checked exactly by an engine-independent oracle. `npm test` runs 10 kills on worker
 * thread task managers and 4 with task manager processes over TCP (`--task-manager-processes 2`:
 * the job master and both task manager processes die together, as a host does); `npm run
 * soak:kill` runs 100 and 50 (WEIR_SOAK_KILLS, WEIR_SOAK_TCP_KILLS). WEIR_SOAK_SEED picks the first
 * seed; a failing trial prints its seed and moments, and `WEIR_SOAK_SEED=<seed> WEIR_SOAK_KILLS=<n>`
 * replays the plan.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { drawSteps, runKillTrial, type KillMoment } from './kill-harness.ts';

const FIRST_SEED = Number(process.env.WEIR_SOAK_SEED ?? 1);
const KILLS_PER_TRIAL = 4;

const VARIANTS = [
  { name: 'worker-thread task managers', kills: Number(process.env.WEIR_SOAK_KILLS ?? 10), args: [] as string[] },
  { name: 'task manager processes over TCP', kills: Number(process.env.WEIR_SOAK_TCP_KILLS ?? 4), args: ['--task-manager-processes', '2'] },
];

describe.each(VARIANTS)('weir run under SIGKILL, $name', ({ name, kills: KILLS, args }) => {
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
    for (let seed = FIRST_SEED; kills < KILLS; seed++) {
      const steps = drawSteps(seed, Math.min(KILLS_PER_TRIAL, KILLS - kills));
      const root = await mkdtemp(path.join(os.tmpdir(), `weir-kill-soak-${seed}-`));
      try {
        const trial = await runKillTrial({ root, steps, env: { KILL_PAD_BYTES: '20000' }, args });
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
