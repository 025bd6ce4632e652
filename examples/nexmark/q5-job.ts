/**
 * Nexmark q5 (hot items, examples/nexmark/q5.ts) as a job module, so `weir run` runs it with
 * checkpoints, a dashboard and a retained job directory:
 *
 *   NEXMARK_EVENTS=2000000 npx weir run examples/nexmark/q5-job.ts --checkpoint-dir /tmp/nx
 *   npx weir advise /tmp/nx/nexmark-q5-<id>
 *
 * Over NEXMARK_EVENTS generated events (default 1,000,000; `Infinity` for an unbounded stream),
 * with event time (`dateTime`, watermarks 4 s behind), checkpointing every second, into a sink that
 * only counts (the Nexmark benchmark's blackhole sink). The module is loaded in every task manager,
 * so it reads its one setting from the environment, as every worker sees the same.
 */
import type { StreamEnvironment, StreamEnvironmentOptions } from 'weir-stream';
import { nexmarkStream } from './event-time.ts';
import { q5 } from './q5.ts';

export const name = 'nexmark-q5';

export const options: StreamEnvironmentOptions = { parallelism: 2, checkpointing: { intervalMs: 1_000 } };

/** NEXMARK_EVENTS, checked: a positive integer or Infinity. */
export function eventsFromEnv(value = process.env.NEXMARK_EVENTS): number {
  if (value === undefined || value === '') return 1_000_000;
  const events = value === 'Infinity' ? Number.POSITIVE_INFINITY : Number(value);
  if (!(events === Number.POSITIVE_INFINITY || (Number.isSafeInteger(events) && events > 0)))
    throw new Error(`NEXMARK_EVENTS must be a positive integer or Infinity, got '${value}'`);
  return events;
}

export default function nexmarkQ5(env: StreamEnvironment): void {
  q5(nexmarkStream(env, { events: eventsFromEnv() }))
    .sinkTo({ name: 'blackhole', kind: 'plain', createWriter: () => ({ write: () => {} }) })
    .name('blackhole')
    .uid('blackhole');
}
