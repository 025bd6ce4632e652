import { describe, expect, it } from 'vitest';
import { describeRecovery, replayCommand, runSeeds } from '../../src/sim/runner.ts';
import type { RecoveryCounts } from '../../src/sim/sim-run.ts';

/** The seeded budget is split over files so vitest runs the parts in parallel: 3 x 110 seeds. */
export const BUDGET_SEEDS_PER_PART = 110;

/**
 * What each part must reach at least: recovery really exercised, not only faults
 * injected. The seeds are fixed, so these fail only when the simulator stops reaching a path.
 */
const MINIMUMS: Partial<Record<keyof RecoveryCounts, number>> = {
  restoresFromCheckpoint: 50,
  restoresWithInflight: 3,
  // Varies most with the seeds' draw of mode and scenario (7 to 62 per part after the event-time
  // scenario joined): the floor says the path is reached, not how often.
  timeoutSwitchesWithData: 5,
  rescales: 5,
  changedJobResumes: 4,
  kills: 30,
  corruptions: 5,
  fallbacks: 4,
  rollbacks: 2,
  // Failed checkpoints of incremental seeds with maxConcurrent > 1. Fan-out chaining (20d18ad)
  // chained the window scenarios' result sinks into their window operators (fewer subtasks to fail
  // one): parts 1 and 2 went 24 -> 13 and 77 -> 69 (part 0: 1,189 -> 1,168).
  incrementalConcurrentAborts: 10,
  // Task managers stuck in user code on cancel, ended by the watchdog (about 40 a
  // part), and frames/credits of a cancelled attempt reaching a reused task manager (hundreds).
  // Seeds 1-330 at 5bdf763: 60/66/68 and 332/160/796 per part, every seed passing. Planted,
  // channels numbered without the attempt fail 71 of seeds 1-1000 and a pool kept after the
  // watchdog fired 223 (seeds that cannot reach the plant were not re-run).
  watchdogTerminations: 8,
  staleDataMessages: 30,
  // Recoveries whose commit order shows (several pending transactions of one sink
  // subtask committed for the first time), and state-kinds writes and deletions of keys a late
  // async snapshot part had pinned; triggers overtaken on their way to a source. The three parts
  // reached at least 19, 1,653, 512 and 9 (seeds 1-330 run outside vitest on a loaded machine).
  orderedRecoveryCommits: 5,
  pinnedOverwrites: 200,
  pinnedDeletions: 50,
  staleTriggers: 3,
  // In-memory task managers that die silently, found by missed heartbeats (a quarter of the seeds
  // with task managers draw one or two deaths; some strike after the fault window): 17/25/25 per
  // part. Control messages of an attempt already torn down (late triggers, acks, failures),
  // dropped by their epoch on either side: 88/86/104 per part (both at 5c931d5).
  taskManagerDeaths: 8,
  staleControlMessages: 30,
  // Faults of the TCP model (half the seeds with task managers draw one to four; many strike a
  // pool between attempts or after the fault window, or the process dies first). Seeds 1-330,
  // outside vitest, per part: processes that exited, found by their closed connections 21/19/20;
  // control connections dropped 19/17/23; data connections dropped 22/15/16 (many struck a pool
  // between attempts), and restarts caused by a subtask failing on a lost data connection (one
  // dropped, or a peer's process exited) 6/7/4; partitions healed
  // 9/9/15, after which a task manager the job master had declared dead stopped 4/2/6.
  taskManagerExits: 6,
  controlConnectionDrops: 6,
  dataConnectionDrops: 5,
  dataConnectionFailovers: 1,
  partitionsHealed: 3,
  partitionsOutlived: 1,
  // HA job masters (two in five of the seeds that kill without corruption or rescale): a new
  // leader waiting out the dead one's lease and restoring the published pointer. Seeds 1-600 at
  // 1dd81a6+: 48 takeovers, 3 with a newer _metadata durable but unpublished; the parts 11/9/6.
  haTakeovers: 3,
  // A leader paused (SIGSTOP) past its lease in three of four HA seeds, replaced, then woken while
  // its successor runs: every one must find its leadership gone and stop without committing
  // (the commit-once and exactly-once checkers). Seeds 1-330 at the draw's introduction, per part:
  // 6/7/3 woke, all stopped.
  haStaleWakes: 1,
  haStaleStopped: 1,
  // The changelog backend (a third of the seeds wrap their backend in it): restores from a
  // checkpoint through materialization + replay, logs truncated by an adopted materialization,
  // segment uploads retried after a storage fault. Seeds 1-110 (part 0, weir sim outside vitest, all
  // passing at 237f996): 63, 517, 458; parts 1 and 2 not measured.
  changelogReplayRestores: 10,
  changelogTruncations: 30,
  changelogUploadRetries: 20,
  // Kills of the process while a materialization was under way (half the changelog seeds draw a kill
  // as their nth materialization starts; other kills land in one by chance). Seeds 1-330 at the
  // draw's introduction (weir sim outside vitest, per part): 11/13/8.
  changelogKillsDuringMaterialization: 3,
  // Object-store checkpoint storage (two in five seeds): no rename, create-only _metadata, uploads
  // lost, PUTs landing after their timeout (some after their checkpoint was discarded: orphans a
  // lifecycle rule removes), _metadata answers lost and the create-only retry finding its own bytes.
  // Seeds 1-330 when the model came (weir sim outside vitest, per part): seeds 40/43/46, lost
  // uploads 166/167/96, late PUTs 75/69/53, orphans 15/23/11, _metadata answers lost 2/2/2.
  objectStoreSeeds: 30,
  lostUploads: 50,
  latePuts: 25,
  lateOrphans: 5,
  metadataAnswersLost: 1,
};

export function budgetPart(part: number): void {
  const start = 1 + part * BUDGET_SEEDS_PER_PART;
  const seeds = BUDGET_SEEDS_PER_PART;
  describe(`simulator seeded budget, part ${part}`, () => {
    it(`seeds ${start}..${start + seeds - 1} pass every checker (all modes and scenarios) and reach every recovery path`, async () => {
      const lines: string[] = [];
      const summary = await runSeeds({ seeds, start, print: (l) => lines.push(l) });
      console.log(`seeds ${start}..${start + seeds - 1}: ${describeRecovery(summary.recovery)}`);
      if (summary.failures.length > 0) console.log(lines.join('\n'));
      expect(summary.failures.map((f) => `${replayCommand(f)}: ${f.failures.map((x) => x.checker).join(', ')}`)).toEqual([]);
      expect(summary.byKind.ok).toBe(seeds);
      // The budget really injects faults and really recovers.
      expect(summary.faults).toBeGreaterThan(seeds);
      expect(summary.restarts).toBeGreaterThan(seeds / 2);
      const below = Object.entries(MINIMUMS).filter(([k, min]) => summary.recovery[k as keyof RecoveryCounts] < min!);
      expect(below.map(([k, min]) => `${k}: ${summary.recovery[k as keyof RecoveryCounts]} < ${min}`)).toEqual([]);
    }, 900_000); // 110 seeds took 126 s quiet and 340-430 s at load 20 once the changelog and object-store draws came
  });
}
