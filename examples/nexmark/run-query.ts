/**
 * Runs one Nexmark query example from the command line:
 *   npx tsx examples/nexmark/qN.ts [events] [parallelism]
 * over `events` generated events (default 1,000,000) at `parallelism` (default 2), checkpointing
 * every 10 s, with event time (`dateTime`, watermarks 4 s behind), into a sink that only counts (as the Nexmark benchmark's blackhole sink does).
 */
import { pathToFileURL } from 'node:url';
import { type DataStream, StreamEnvironment } from 'weir-stream';
import type { NexmarkEvent } from 'weir-stream/nexmark';
import { nexmarkStream } from './event-time.ts';

/** Whether the module with this `import.meta.url` is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  return script !== undefined && moduleUrl === pathToFileURL(script).href;
}

/** Builds the query over a Nexmark source, runs it, and prints how many results it emitted. */
export async function runQuery<R>(name: string, query: (events: DataStream<NexmarkEvent>) => DataStream<R>): Promise<void> {
  const events = Number(process.argv[2] ?? 1_000_000);
  const parallelism = Number(process.argv[3] ?? 2);
  const env = StreamEnvironment.create({ parallelism, checkpointing: { intervalMs: 10_000 } });
  let emitted = 0;
  query(nexmarkStream(env, { events }))
    .sinkTo({ name: 'count', kind: 'plain', createWriter: () => ({ write: () => void emitted++ }) })
    .name('blackhole');
  const started = performance.now();
  const result = await env.execute(`nexmark-${name}`);
  const seconds = (performance.now() - started) / 1000;
  console.log(`${name}: ${result.status}, ${emitted} results from ${events} events in ${seconds.toFixed(1)} s (${Math.round(events / seconds)} events/s)`);
}
