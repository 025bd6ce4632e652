/**
 * `weir run --task-manager-processes N`: N task manager processes on this host, started as
 * `weir taskmanager --connect` children of the job master, for one big machine (each process has
 * its own event loop and heap, where worker threads share one process). They end by themselves
 * when the job master closes (their connection is refused on redial); the job master also sends
 * them SIGTERM when it exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../core/package-version.ts';

export interface LocalTaskManagers {
  /** Stops every child (SIGTERM) that still runs. */
  stop(): void;
}

export function startLocalTaskManagers(n: number, address: { host: string; port: number }, slots: number, token: string): LocalTaskManagers {
  const bin = join(packageRoot(), 'bin', 'weir.mjs');
  const children: ChildProcess[] = [];
  for (let i = 0; i < n; i++) {
    const child = spawn(process.execPath, [bin, 'taskmanager', '--connect', `${address.host}:${address.port}`, '--slots', String(slots), '--quiet'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, WEIR_CLUSTER_TOKEN: token },
    });
    children.push(child);
  }
  const stop = () => {
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
