/**
 * `weir-stream/redis`: Redis Streams as a source and a transactional sink. A separate entry so
 * that `weir-stream` itself never loads `ioredis`; install it beside Weir to use this one.
 */
export { RedisStreamSource } from './redis-source.ts';
export type { RedisStreamEntry, RedisStreamSourceOptions, RedisStreamSplit } from './redis-source.ts';
export { RedisStreamSink } from './redis-sink.ts';
export type { RedisStreamCommittable, RedisStreamSinkOptions } from './redis-sink.ts';
export type { RedisConnectionOptions } from './settings.ts';
