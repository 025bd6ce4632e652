import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { listJobs, lookupJob, registerJob, type RegisteredJob } from '../../src/cli/job-registry.ts';
import { ensureRegistryDir, registryDir, UnsafeRegistryError } from '../../src/cli/registry-dir.ts';
import { FIXTURES, lines, runCli } from './run-cli.ts';

const ROOT = mkdtempSync(path.join(os.tmpdir(), 'weir-registry-test-'));
let home: string;
let n = 0;

function entry(jobId: string): RegisteredJob {
  return { jobId, name: 'j', address: 'http://127.0.0.1:9', token: 'e'.repeat(64), pid: process.pid, module: '/j.ts', startedAt: new Date(0).toISOString() };
}

describe('the job registry is per user, 0700, and never followed through symlinks', () => {
  beforeEach(() => {
    home = path.join(ROOT, `home-${n++}`);
    process.env.WEIR_HOME = home;
  });
  afterAll(() => {
    delete process.env.WEIR_HOME;
    rmSync(ROOT, { recursive: true, force: true });
  });

  it('lives in $WEIR_HOME/jobs, else $XDG_RUNTIME_DIR/weir when that is ours, else ~/.weir/jobs', () => {
    expect(registryDir({ WEIR_HOME: '/srv/w' })).toBe('/srv/w/jobs');
    expect(registryDir({ XDG_RUNTIME_DIR: ROOT })).toBe(path.join(ROOT, 'weir'));
    expect(registryDir({ XDG_RUNTIME_DIR: path.join(ROOT, 'missing') })).toBe(path.join(os.homedir(), '.weir', 'jobs'));
    expect(registryDir({ XDG_RUNTIME_DIR: 'relative' })).toBe(path.join(os.homedir(), '.weir', 'jobs'));
    expect(registryDir({})).toBe(path.join(os.homedir(), '.weir', 'jobs'));
  });

  it('is created 0700 and entries are written 0600 and read back', () => {
    const file = registerJob(entry('a-1'));
    expect(statSync(path.join(home, 'jobs')).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(lookupJob('a-1')).toEqual(entry('a-1'));
    expect(listJobs()).toEqual([entry('a-1')]);
  });

  it('refuses a registry directory open to others, naming it; the CLI exits 2, weir run too, before the job starts', async () => {
    const dir = ensureRegistryDir();
    chmodSync(dir, 0o755);
    expect(() => listJobs()).toThrow(UnsafeRegistryError);
    expect(() => registerJob(entry('b-1'))).toThrow(`refusing the job registry ${dir}: its mode is 0755, open to other users`);

    const listed = await runCli(['list'], { env: { WEIR_HOME: home } });
    expect(listed.code).toBe(2);
    expect(lines(listed.stderr)).toEqual([expect.stringContaining(`weir: refusing the job registry ${dir}: its mode is 0755`)]);
    const cancel = await runCli(['cancel', 'some-job'], { env: { WEIR_HOME: home } });
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toContain(`refusing the job registry ${dir}`);

    // weir run agrees with `weir --help` (exit 2 for an unsafe registry): refused before the job starts.
    const run = await runCli(['run', path.join(FIXTURES, 'tiny-job.ts')], { env: { WEIR_HOME: home } });
    expect(run.code, run.stderr).toBe(2);
    expect(lines(run.stderr)).toEqual([
      `weir: refusing the job registry ${dir}: its mode is 0755, open to other users; it must be a directory owned by you with mode 0700 (chmod 700 ${dir}, or set WEIR_HOME to use another place)`,
    ]);
    expect(run.stdout).toBe('');
  });

  // Only root can give a directory to another user, so only then can this run.
  it.runIf(process.getuid?.() === 0)('refuses a registry directory owned by another user (uid 65534)', () => {
    const dir = ensureRegistryDir();
    chownSync(dir, 65534, 65534);
    expect(() => lookupJob('f-1')).toThrow(`refusing the job registry ${dir}: it is owned by uid 65534, not by you (uid 0)`);
  });

  it('refuses a registry directory that is a symlink, even to a directory of ours', () => {
    const real = path.join(ROOT, `real-${n}`);
    mkdirSync(real, { mode: 0o700 });
    mkdirSync(home, { mode: 0o700 });
    symlinkSync(real, path.join(home, 'jobs'));
    expect(() => registerJob(entry('c-1'))).toThrow('it is a symbolic link');
    expect(() => lookupJob('c-1')).toThrow(UnsafeRegistryError);
  });

  it('never writes through a symlink planted at an entry name, and refuses to read one', () => {
    const dir = ensureRegistryDir();
    const victim = path.join(ROOT, `victim-${n}.txt`);
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, path.join(dir, 'd-1.json'));
    expect(() => lookupJob('d-1')).toThrow(`refusing job registry entry ${path.join(dir, 'd-1.json')}: it is a symbolic link`);

    registerJob(entry('d-1'));
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(path.join(dir, 'd-1.json')).isSymbolicLink()).toBe(false);
    expect(lookupJob('d-1')).toEqual(entry('d-1'));
  });

  it('refuses an entry others could read, and skips it in listings', () => {
    const dir = ensureRegistryDir();
    registerJob(entry('e-1'));
    writeFileSync(path.join(dir, 'e-2.json'), JSON.stringify(entry('e-2')), { mode: 0o644 });
    chmodSync(path.join(dir, 'e-2.json'), 0o644);
    expect(() => lookupJob('e-2')).toThrow('readable by you only (mode 0600)');
    expect(listJobs().map((j) => j.jobId)).toEqual(['e-1']);
  });
});
