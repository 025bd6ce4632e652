/**
 * The tcp benchmark's Nexmark job module (task manager processes load it, shipped as a bundle): the
 * example query NEXMARK_TCP_QUERY (q5 or q8, examples/nexmark unchanged) over NEXMARK_TCP_EVENTS
 * events of the Nexmark source with its event time, into a sink that only counts (the nexmark
 * benchmark's blackhole) and digests what it gets (nexmark-digest.ts): with NEXMARK_TCP_DIGEST
 * naming a file, each sink subtask appends its digest as a JSON line when it closes. It imports
 * Weir only through its public entries ('weir-stream', 'weir-stream/nexmark', as the examples do).
 */
import { appendFileSync } from 'node:fs';
import type { DataStream, Sink, StreamEnvironment } from 'weir-stream';
import type { NexmarkEvent } from 'weir-stream/nexmark';
import { nexmarkStream } from '../../examples/nexmark/event-time.ts';
import { q5 } from '../../examples/nexmark/q5.ts';
import { q8 } from '../../examples/nexmark/q8.ts';
import { DigestBuilder, type DigestedQuery } from './nexmark-digest.ts';

/** The query's results as plain records: the sink reads their fields by name. */
function resultsOf(query: DigestedQuery, events: DataStream<NexmarkEvent>): DataStream<Record<string, unknown>> {
  return (query === 'q5' ? q5(events) : q8(events)) as unknown as DataStream<Record<string, unknown>>;
}

function digestingBlackhole(query: DigestedQuery, file: string | undefined): Sink<Record<string, unknown>> {
  return {
    name: 'blackhole',
    kind: 'plain',
    createWriter: () => {
      const digest = new DigestBuilder(query);
      return {
        write: (r) => digest.add(r),
        close: () => {
          if (file) appendFileSync(file, `${JSON.stringify(digest.digest)}\n`);
        },
      };
    },
  };
}

export default function build(env: StreamEnvironment): void {
  const query = process.env.NEXMARK_TCP_QUERY;
  if (query !== 'q5' && query !== 'q8') throw new Error(`NEXMARK_TCP_QUERY must be q5 or q8, got ${query}`);
  const events = Number(process.env.NEXMARK_TCP_EVENTS ?? 100_000);
  resultsOf(query, nexmarkStream(env, { events })).sinkTo(digestingBlackhole(query, process.env.NEXMARK_TCP_DIGEST)).uid('blackhole');
}
