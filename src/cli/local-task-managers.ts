/**
 * `weir run --task-manager-processes N`: N task manager processes on this host, started as
 * `weir taskmanager --connect` children of the job master, for one big machine (each process has
 * its own event loop and heap, where worker threads share one process). They end by themselves
 * when the job master closes (their connection is refused on redial); the job master also sends
 * them SIGTERM when it exits.
 *
 * The job master supervises them as a cluster manager would: a child killed by a signal (its own
 * stuck-thread watchdog, the OOM killer, a user's `kill -9`) is replaced after `RESTART_DELAY_MS`,
 * so the job finds its slots again; a child that exits by itself (the job master gone, a refusal,
 * a bad flag) is not, since another would end the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { wallTimer } from '../core/adapters.ts';
import type { Cancellable } from '../core/time.ts';
import { packageRoot } from '../core/package-version.ts';

/** Milliseconds before a child killed by a signal is replaced. */
const RESTART_DELAY_MS = 500;

export interface LocalTaskManagers {
  /** Stops every child (SIGTERM) that still runs, and replaces none any more. */
  stop(): void;
}

export function startLocalTaskManagers(
  n: number,
  address: { host: string; port: number },
  slots: number,
  token: string,
  log: (line: string) => void,
): LocalTaskManagers {
  const bin = join(packageRoot(), 'bin', 'weir.mjs');
  const children = new Set<ChildProcess>();
  const pending = new Set<Cancellable>();
  let stopping = false;
  const startOne = (): void => {
    const child = spawn(process.execPath, [bin, 'taskmanager', '--connect', `${address.host}:${address.port}`, '--slots', String(slots), '--quiet'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, WEIR_CLUSTER_TOKEN: token },
    });
    children.add(child);
    child.on('exit', (_code, signal) => {
      children.delete(child);
      if (stopping || signal === null) return;
      log(`task manager process ${child.pid} was killed (${signal}); starting another`);
      const timer = wallTimer(RESTART_DELAY_MS, () => {
        pending.delete(timer);
        if (!stopping) startOne();
      });
      pending.add(timer);
    });
  };
  for (let i = 0; i < n; i++) startOne();
  const stop = () => {
    stopping = true;
    for (const t of pending) t.cancel();
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  };
  process.once('exit', stop);
  return {
    stop: () => {
      process.off('exit', stop);
      stop();
    },
  };
}
