/**
 * The Nexmark queries the benchmark runs (the example jobs of examples/nexmark, unchanged) and
 * the per-core throughput the Nexmark project published for Flink 1.13 (8 task managers, RocksDB
 * incremental, 3-minute checkpoints), in events per second per core.
 */
import type { DataStream, DataStreamSink, Sink } from '../../src/index.ts';
import type { NexmarkEvent } from '../../src/connectors/nexmark/index.ts';
import { q0 } from '../../examples/nexmark/q0.ts';
import { q1 } from '../../examples/nexmark/q1.ts';
import { q2 } from '../../examples/nexmark/q2.ts';
import { q3 } from '../../examples/nexmark/q3.ts';
import { q4 } from '../../examples/nexmark/q4.ts';
import { q5 } from '../../examples/nexmark/q5.ts';
import { q7 } from '../../examples/nexmark/q7.ts';
import { q8 } from '../../examples/nexmark/q8.ts';
import { q11 } from '../../examples/nexmark/q11.ts';

export interface NexmarkQuery {
  readonly name: string;
  /** Builds the query over `events` into `sink`. */
  readonly attach: (events: DataStream<NexmarkEvent>, sink: Sink<unknown>) => DataStreamSink;
  /** Flink 1.13's published figure, events/s per core. */
  readonly flinkPerCore: number;
  /** Events of a full run: q0-q2 cost least per event, so they get more. */
  readonly events: number;
}

function query<R>(name: string, build: (events: DataStream<NexmarkEvent>) => DataStream<R>, flinkPerCore: number, events: number): NexmarkQuery {
  return { name, attach: (source, sink) => build(source).sinkTo(sink), flinkPerCore, events };
}

export const NEXMARK_QUERIES: readonly NexmarkQuery[] = [
  query('q0', q0, 155_020, 20_000_000),
  query('q1', q1, 157_940, 20_000_000),
  query('q2', q2, 175_210, 20_000_000),
  query('q3', q3, 152_120, 10_000_000),
  query('q4', q4, 34_330, 10_000_000),
  query('q5', q5, 22_140, 10_000_000),
  query('q7', q7, 12_330, 10_000_000),
  query('q8', q8, 146_140, 10_000_000),
  query('q11', q11, 39_700, 10_000_000),
];
