/**
 * A checkpoint directory that cannot be written and a missing embedded local
 * directory are configuration errors reported at start (for root too), what dead runs left
 * half-done is removed at start while a live run's is not touched, and the final status line
 * counts every checkpoint.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StreamEnvironment } from '../../src/index.ts';
import { finalStatusLine, superviseJob } from '../../src/cli/supervise.ts';
import { checkpointsIn, KILL_JOB, killGroup, killWhen, startKillJob, waitUntil } from './kill-harness.ts';
import { REPO, runCli } from './run-cli.ts';

const FAST = { KILL_RECORDS: '2000', KILL_RATE: '200000' };
/** A run that must still be live when the test ends, however loaded the machine: 20,000 records at 50/s take 400 s, past any timeout here. */
const LIVE_RATE = '50';

/** Whether this machine lets us make a read-only bind mount in a user namespace (`unshare -rm`). */
const canUnshare = spawnSync('unshare', ['-rm', 'true']).status === 0;

/** Whether `chattr +i` works here (ext4 and CAP_LINUX_IMMUTABLE): an immutable directory refuses root too. */
function tryImmutable(dir: string): boolean {
  return spawnSync('chattr', ['+i', dir]).status === 0;
}

describe('operational edges of weir run', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'weir-edges-'));
  });
  afterEach(async () => {
    spawnSync('chattr', ['-R', '-i', root]);
    await rm(root, { recursive: true, force: true });
  });

  it('a checkpoint directory below a file is reported at start, naming both, without restarts', async () => {
    writeFileSync(path.join(root, 'file'), 'x');
    const chk = path.join(root, 'file', 'chk');
    const r = await runCli(['run', KILL_JOB, '--checkpoint-dir', chk, '--quiet'], { env: FAST });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`weir: checkpointStorage: checkpoint directory ${chk} cannot be created: ${path.join(root, 'file')} is a file, not a directory`);
    expect(r.stderr).not.toMatch(/restarting/);
  });

  it.skipIf(!canUnshare)('a checkpoint directory on a read-only file system is reported at start (EROFS)', async () => {
    const ro = path.join(root, 'ro');
    mkdirSync(ro);
    const weir = `${process.execPath} ${path.join(REPO, 'bin/weir.mjs')} run ${KILL_JOB} --checkpoint-dir ${ro} --quiet`;
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', `mount --bind ${ro} ${ro} && mount -o remount,bind,ro ${ro} && exec ${weir}`], {
      encoding: 'utf8',
      env: { ...process.env, ...FAST },
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`weir: checkpointStorage: checkpoint directory ${ro} cannot be written: the file system is read-only (EROFS)`);
    expect(r.stderr).not.toMatch(/restarting/);
  });

  it('an immutable checkpoint directory (which root cannot write either) is reported at start', async (ctx) => {
    const locked = path.join(root, 'locked');
    mkdirSync(locked);
    if (!tryImmutable(locked)) ctx.skip();
    const r = await runCli(['run', KILL_JOB, '--checkpoint-dir', locked, '--quiet'], { env: FAST });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`weir: checkpointStorage: checkpoint directory ${locked} cannot be written: permission denied (EPERM)`);
  });

  it('a missing embeddedState.localDir is a configuration error naming the option, not retried', async () => {
    const missing = path.join(root, 'no-such-dir');
    const r = await runCli(['run', KILL_JOB, '--checkpoint-dir', path.join(root, 'chk'), '--quiet'], { env: { ...FAST, KILL_LOCAL_DIR: missing } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`weir: embeddedState.localDir: embedded state directory ${missing} does not exist`);
    expect(r.stderr).not.toMatch(/restarting/);
  });

  it('an embeddedState.localDir that vanishes after the start check fails the job at once instead of restarting', async () => {
    const local = path.join(root, 'local');
    mkdirSync(local);
    const env = StreamEnvironment.create({
      parallelism: 1,
      stateBackend: 'embedded',
      embeddedState: { localDir: local },
      restartStrategy: { type: 'fixed-delay', attempts: 5, delayMs: 1 },
    });
    env
      .generate({ count: 10 }, (i) => i)
      .uid('n')
      .keyBy((i) => i % 2)
      .process(() => ({ processElement: () => {} }))
      .uid('p');
    const restarts: string[] = [];
    const run = env.execute('vanishing-local-dir', {
      // Called after the start check and before the first deployment: the directory goes away in between.
      onJobMaster: () => rmSync(local, { recursive: true }),
      onEvent: (e) => {
        if (e.type === 'restarting') restarts.push(e.cause);
      },
    });
    await expect(run).rejects.toThrow(`embeddedState.localDir: ${local} does not exist or is not a directory`);
    expect(restarts).toEqual([]);
  });

  it('removes incomplete checkpoints of a dead run at start and leaves a live run and completed checkpoints alone', { timeout: 120_000 }, async () => {
    const slow = { KILL_PAD_BYTES: '20000', KILL_RATE: '500' };
    // Each run writes its own output: runs sharing a sink directory would be one job run twice at once.
    const output = (run: string) => ({ KILL_OUTPUT: path.join(root, `output-${run}`) });
    const live = await startKillJob(root, null, { ...slow, KILL_RATE: LIVE_RATE, ...output('live') });
    try {
      // A checkpoint the live run is still writing, as far as anyone else can tell.
      const liveInProgress = path.join(live.jobDir, 'chk-999');
      mkdirSync(liveInProgress);
      const dead = await startKillJob(root, null, { ...slow, ...output('dead') });
      // A half-written checkpoint after a completed one (ids only grow, so a completed one stays visible or was retained).
      let completedOnce = false;
      const halfWritten = () => {
        const now = checkpointsIn(dead.jobDir);
        completedOnce ||= now.completed.length > 0;
        return completedOnce && now.incomplete.length > 0;
      };
      expect(await killWhen(dead.cli, 'half-written checkpoint after a completed one', halfWritten)).toBe(true);
      // On a loaded machine the checkpoint may have completed before the kill landed: one more half-written one, as a later kill would leave it.
      const seen = checkpointsIn(dead.jobDir);
      const planted = path.join(dead.jobDir, `chk-${Math.max(...seen.completed, ...seen.incomplete) + 1}`);
      mkdirSync(planted);
      writeFileSync(path.join(planted, 'keyed-sequence-0-1'), 'half a state file');
      const left = checkpointsIn(dead.jobDir);
      expect(left.incomplete.length).toBeGreaterThan(0);

      const next = await runCli(['run', KILL_JOB, '--checkpoint-dir', root, '--quiet'], { env: { ...FAST, ...output('next') } });
      expect(next.code, next.stderr).toBe(0);
      for (const id of left.incomplete)
        expect(next.stderr).toContain(`removed ${path.join(dead.jobDir, `chk-${id}`)}: an incomplete checkpoint of a run that is gone`);
      expect(checkpointsIn(dead.jobDir)).toEqual({ completed: left.completed, incomplete: [] });
      expect(existsSync(liveInProgress)).toBe(true);
      expect(live.cli.child.exitCode, 'the live run is still running').toBeNull();
    } finally {
      await killGroup(live.cli);
    }
  });

  it('removes embedded working directories of a dead run at start and leaves a live run alone', { timeout: 120_000 }, async () => {
    const local = path.join(root, 'local');
    mkdirSync(local);
    const embedded = { KILL_LOCAL_DIR: local, KILL_RATE: '500' };
    const stores = () => new Set(readdirSync(local));
    const live = await startKillJob(path.join(root, 'a'), null, { ...embedded, KILL_RATE: LIVE_RATE });
    try {
      await waitUntil(live.cli, 'a completed checkpoint of the live run', () => checkpointsIn(live.jobDir).completed.length > 0);
      const liveStores = stores();
      expect(liveStores.size).toBeGreaterThan(0);
      const dead = await startKillJob(path.join(root, 'b'), null, embedded);
      expect(await killWhen(dead.cli, 'a completed checkpoint of the doomed run', () => checkpointsIn(dead.jobDir).completed.length > 0)).toBe(true);
      const deadStores = [...stores()].filter((n) => !liveStores.has(n));
      expect(deadStores.length, 'the killed run left its working directories').toBeGreaterThan(0);

      const next = await runCli(['run', KILL_JOB, '--checkpoint-dir', path.join(root, 'c'), '--quiet'], { env: { ...FAST, KILL_LOCAL_DIR: local } });
      expect(next.code, next.stderr).toBe(0);
      for (const n of deadStores) expect(next.stderr).toContain(`removed ${path.join(local, n)}: embedded working state of a run that is gone`);
      // The live run's working state is untouched; the finished run removed its own.
      expect(stores()).toEqual(liveStores);
    } finally {
      await killGroup(live.cli);
    }
  });

  it('the final status line counts every completed checkpoint, past the 100 the history keeps', { timeout: 60_000 }, async () => {
    const env = StreamEnvironment.create({ parallelism: 1 });
    env
      .generate({ count: Infinity, ratePerSec: 1_000 }, (i) => i)
      .uid('n')
      .sinkTo({ name: 'discard', kind: 'plain', createWriter: () => ({ write: () => {} }) })
      .uid('discard');
    const stream = Object.assign(new Writable({ write: (_c, _e, cb) => cb() }), { isTTY: false });
    let running!: () => void;
    const isRunning = new Promise<void>((resolve) => (running = resolve));
    const outcome = await superviseJob(
      env,
      'count-checkpoints',
      { onEvent: (e) => e.type === 'running' && running() },
      {
        quiet: true,
        stream: stream as unknown as NodeJS.WriteStream,
        onStarted: (client) => {
          void (async () => {
            await isRunning;
            for (let i = 0; i < 130; i++) await client.triggerCheckpoint();
            await client.cancel();
          })();
        },
      },
    );
    expect(outcome.status).toBe('CANCELED');
    expect(outcome.checkpointsCompleted).toBe(130);
    expect(finalStatusLine(outcome)).toMatch(/\| 130 checkpoints, last checkpoint 130: /);
  });
});
