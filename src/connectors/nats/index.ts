/**
 * `weir-stream/nats`: NATS JetStream as a source and a sink. A separate entry so that
 * `weir-stream` itself never loads the `@nats-io` packages; install `@nats-io/transport-node` and
 * `@nats-io/jetstream` beside Weir to use this one.
 */
export { JetStreamSource } from './jetstream-source.ts';
export type { JetStreamRecord, JetStreamSourceOptions, JetStreamSplit } from './jetstream-source.ts';
export { JetStreamSink } from './jetstream-sink.ts';
export type { JetStreamCommitCounts, JetStreamCommittable, JetStreamSinkOptions } from './jetstream-sink.ts';
export type { NatsConnectionOptions } from './settings.ts';
