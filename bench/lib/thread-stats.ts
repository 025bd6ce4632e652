/**
 * Where a thread's wall time went between two moments, from Linux's /proc/thread-self/schedstat:
 * on a CPU, waiting for one (runnable but the machine is busy: other load), or neither (sleeping:
 * the event loop had nothing to do). The split makes idle time measurable on a shared machine,
 * where wall-clock figures mostly measure the other load. Elsewhere (no procfs) it reports nothing.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface ThreadSample {
  readonly wallMs: number;
  readonly onCpuMs: number;
  readonly runqueueMs: number;
}

/** This thread's sample now, or null where schedstat is not available. */
export function sampleThread(): ThreadSample | null {
  let text: string;
  try {
    text = readFileSync('/proc/thread-self/schedstat', 'utf8');
  } catch {
    return null;
  }
  const [run, wait] = text.trim().split(/\s+/).map(Number);
  if (run === undefined || wait === undefined || !Number.isFinite(run) || !Number.isFinite(wait)) return null;
  return { wallMs: performance.now(), onCpuMs: run / 1e6, runqueueMs: wait / 1e6 };
}

/** Shares of the wall time between two samples of one thread. */
export interface ThreadShares {
  readonly wallMs: number;
  readonly onCpu: number;
  readonly runqueue: number;
  readonly sleeping: number;
}

export function sharesBetween(a: ThreadSample, b: ThreadSample): ThreadShares {
  const wallMs = b.wallMs - a.wallMs;
  const onCpu = (b.onCpuMs - a.onCpuMs) / wallMs;
  const runqueue = (b.runqueueMs - a.runqueueMs) / wallMs;
  return { wallMs, onCpu, runqueue, sleeping: Math.max(0, 1 - onCpu - runqueue) };
}
