/**
 * A checkpoint directory to be created below a read-only mount says EROFS
 * (read-only), naming the directory and where the file system is read-only, not ENOENT. The mount
 * is a read-only bind mount in a mount namespace of the command's own (`unshare -rm`): it goes
 * away with the command, so nothing is left mounted.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KILL_JOB } from './kill-harness.ts';
import { REPO, WEIR_HOME } from './run-cli.ts';

const canUnshare = spawnSync('unshare', ['-rm', 'true']).status === 0;
const root = mkdtempSync(path.join(os.tmpdir(), 'weir-rofs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs `weir run` with `ro` bind-mounted read-only onto itself, in a namespace of its own. */
function runOnReadOnly(ro: string, checkpointDir: string) {
  const weir = `${process.execPath} ${path.join(REPO, 'bin/weir.mjs')} run ${KILL_JOB} --checkpoint-dir ${checkpointDir} --quiet`;
  return spawnSync('unshare', ['-rm', 'sh', '-c', `mount --bind ${ro} ${ro} && mount -o remount,bind,ro ${ro} && exec ${weir}`], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', WEIR_HOME, KILL_RECORDS: '2000', KILL_RATE: '200000' },
  });
}

describe('a checkpoint directory below a read-only mount', () => {
  it.skipIf(!canUnshare)('is reported at start as read-only (EROFS), naming the directory, not ENOENT', () => {
    const ro = path.join(root, 'ro');
    mkdirSync(ro);
    const chk = path.join(ro, 'chk', 'deeper');
    const r = runOnReadOnly(ro, chk);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`weir: checkpointStorage: checkpoint directory ${chk} cannot be created: the file system is read-only (EROFS) at ${ro}`);
    expect(r.stderr).not.toContain('ENOENT');
    expect(r.stderr).not.toMatch(/restarting/);
    // The mount lived only in the command's namespace.
    expect(spawnSync('findmnt', ['-n', ro]).stdout.toString()).toBe('');
  });
});
