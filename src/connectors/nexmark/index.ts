/**
 * `weir-stream/nexmark`: the Nexmark auction-model generator as a checkpointed source, for
 * benchmarks and examples. It needs no driver; it is an entry of its own because it is not part
 * of what a job needs.
 */
export { NexmarkSource, nexmarkEvents } from './nexmark-source.ts';
export type { NexmarkOptions } from './config.ts';
export type { Auction, Bid, NexmarkEvent, Person } from './model.ts';
