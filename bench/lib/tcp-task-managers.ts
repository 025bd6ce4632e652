/**
 * Task manager processes for the tcp benchmark: `node bin/weir.mjs taskmanager --connect host:port`
 * children of this process, as `weir run --task-manager-processes N` starts them
 * (src/cli/local-task-managers.ts), with each one's CPU time read from Linux's /proc.
 *
 * CPU of a child: utime + stime of /proc/<pid>/stat (every thread of it; clock ticks, 10 ms each
 * on Linux). Until this process reaps the child (its 'exit' event) the file is there, even after
 * the child ended (a zombie keeps its figures); from then on its figure is what it added to this
 * process's cutime + cstime (CPU of reaped children), and its pid is never read again (it may be
 * reused). Without procfs the figures are NaN, and the scenario fails rather than report CPU
 * without the children's.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WEIR_BIN = join(REPO_DIR, 'bin', 'weir.mjs');

/** Milliseconds per clock tick of /proc's CPU times (`getconf CLK_TCK`, 100 on every Linux we run). */
const MS_PER_TICK = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? 1000 / ticks : 10;
  } catch {
    return 10;
  }
})();

/** Fields after the command name, which is in parentheses and may hold spaces: [0] is field 3 (state). */
function statFields(path: string): string[] | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU ms of process `pid` (fields 14 and 15), or null when it is gone (or no procfs). */
export function processCpuMs(pid: number): number | null {
  const f = statFields(`/proc/${pid}/stat`);
  if (f === null) return null;
  return (Number(f[11]) + Number(f[12])) * MS_PER_TICK;
}

/** User + system CPU ms of this process's reaped children (fields 16 and 17), or NaN without procfs. */
export function reapedChildrenCpuMs(): number {
  const f = statFields('/proc/self/stat');
  if (f === null) return Number.NaN;
  return (Number(f[13]) + Number(f[14])) * MS_PER_TICK;
}

/** This process's CPU ms (user + system, every thread). */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export interface TaskManagerProcesses {
  readonly pids: readonly number[];
  /** Their CPU ms now, summed: each one alive (or a zombie) read from /proc, each one reaped as it measured at its exit. */
  cpuMs(): number;
  /** Waits up to `ms` for every child to end by itself (a task manager does once its job master is gone); true if they all did. */
  endBy(ms: number): Promise<boolean>;
  /** How each child ended (exit code, or signal name), null while it runs. */
  ends(): Array<number | string | null>;
  /** SIGTERM to every child still running, then waits for them (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly address: { readonly host: string; readonly port: number };
  readonly count: number;
  readonly slots: number;
  readonly token: string;
  /** Where the children keep shipped job modules (a temporary directory: not the user's cache). */
  readonly cacheDir: string;
}

/**
 * CPU of reaped children not yet attributed to one: each child's exit takes the growth since the
 * last exit. libuv reaps every child that ended in one turn before it reports their exits, so the
 * first of two children that ended together is given both and the second nothing; their sum is
 * still right, which is all the scenario reads (it sums over the children of a run, and waits for
 * one run's children to exit before it starts the next).
 */
let attributedChildrenCpuMs = reapedChildrenCpuMs();

export function startTaskManagerProcesses(o: StartOptions): TaskManagerProcesses {
  const children: ChildProcess[] = [];
  /** pid -> CPU ms attributed to it when it was reaped. */
  const finalCpu = new Map<number, number>();
  const exits: Array<Promise<void>> = [];
  for (let i = 0; i < o.count; i++) {
    const child = spawn(
      process.execPath,
      [WEIR_BIN, 'taskmanager', '--connect', `${o.address.host}:${o.address.port}`, '--slots', String(o.slots), '--cache-dir', o.cacheDir, '--quiet'],
      { cwd: REPO_DIR, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, WEIR_CLUSTER_TOKEN: o.token } },
    );
    if (child.pid === undefined) throw new Error('could not start a task manager process');
    const pid = child.pid;
    children.push(child);
    exits.push(
      new Promise<void>((resolveExit) => {
        child.once('exit', () => {
          const now = reapedChildrenCpuMs();
          finalCpu.set(pid, now - attributedChildrenCpuMs);
          attributedChildrenCpuMs = now;
          resolveExit();
        });
      }),
    );
  }
  const pids = children.map((c) => c.pid!);
  const exited = Promise.all(exits).then(() => undefined);
  const kill = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  };
  process.once('exit', kill);
  return {
    pids,
    cpuMs: () => {
      let sum = 0;
      for (const pid of pids) sum += finalCpu.get(pid) ?? processCpuMs(pid) ?? Number.NaN; // once reaped, its pid may be reused: never read it again
      return sum;
    },
    endBy: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
      const ended = await Promise.race([exited.then(() => true), late]);
      clearTimeout(timer);
      return ended;
    },
    ends: () => children.map((c) => c.exitCode ?? c.signalCode),
    stop: async (graceMs = 5_000) => {
      kill();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((r) => {
        timer = setTimeout(() => {
          for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
          r();
        }, graceMs);
      });
      await Promise.race([exited, late]);
      await exited;
      clearTimeout(timer);
      process.off('exit', kill);
    },
  };
}
