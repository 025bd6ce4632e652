/**
 * Nexmark q0, pass-through: every bid, unchanged. Measures what the engine costs per record with
 * no work at all. Run: npx tsx examples/nexmark/q0.ts [events] [parallelism]
 */
import type { DataStream } from 'weir-stream';
import type { Bid, NexmarkEvent } from 'weir-stream/nexmark';
import { isMain, runQuery } from './run-query.ts';
import { bids } from './select.ts';

/** The bids of the event stream. */
export function q0(events: DataStream<NexmarkEvent>): DataStream<Bid> {
  return events.flatMap(bids).name('q0-bids');
}

if (isMain(import.meta.url)) await runQuery('q0', q0);
